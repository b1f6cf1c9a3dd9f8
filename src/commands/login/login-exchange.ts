import type { AppContext } from '../../context.js';
import { MmauthError } from '../../errors.js';

/** The redirect URL `--complete` was given: the argument, or stdin for `-`. */
export async function completionUrl(value: string, ctx: AppContext): Promise<URL> {
  const text = (value === '-' ? await ctx.readStdin() : value).trim();
  try {
    return new URL(text);
  } catch {
    throw new MmauthError(
      'usage',
      'what --complete was given is not a URL: give the whole address the browser ended on',
    );
  }
}
