import type { Paint } from './output.js';

/** chalk at the level stderr supports (at least basic colour on a terminal): the command line's colours. */
export async function chalkColours(): Promise<Paint> {
  const { Chalk, supportsColorStderr } = await import('chalk');
  return new Chalk({ level: supportsColorStderr === false ? 1 : supportsColorStderr.level });
}
