import type { AppContext } from '../context.js';
import type { TokenOrigin } from '../oauth/wire.js';
import { selectProfile } from '../settings/profile-selection.js';

/** What the failing run was, for hints that name the next command: subcommand, profile, token origin. */
export interface FailureContext {
  command: string | undefined;
  profileName: string;
  origin: TokenOrigin | undefined;
  /**
   * Inside `exec --sandbox` (MMAUTH_SANDBOX_RUN set), the variables exec handed this process
   * (MMAUTH_API_URL, MMAUTH_TOKEN_FILE, MMAUTH_TOKEN_URL) that it has: hints name them, not a login
   * that cannot happen there. Undefined outside a sandbox.
   */
  sandboxVariables?: string[];
}

/** The variables exec hands a child that stand in for the grant inside a sandbox. */
const CHILD_VARIABLES = ['MMAUTH_API_URL', 'MMAUTH_TOKEN_FILE', 'MMAUTH_TOKEN_URL'];

/** What cli.ts knows of the run that failed: the subcommand and the options commander parsed. */
export interface FailedRun {
  command: string | undefined;
  options: Readonly<Record<string, unknown>>;
}

/** The origin a command was getting a token of, when the command itself says (login, client-credentials). */
function originOfCommand(run: FailedRun): TokenOrigin | undefined {
  if (run.command === 'client-credentials') return 'client_credentials';
  if (run.command !== 'login') return undefined;
  if (run.options.withToken === true) return 'personal';
  return run.options.implicit === true ? 'implicit' : 'authorization_code';
}

/**
 * The context the failure map words its hints in: the command, the profile (selectProfile) and how its token is obtained (the command's own kind, else the
 * stored profile's latest token). Never throws: what cannot be read is left out.
 */
export async function failureContextFor(run: FailedRun, ctx: AppContext): Promise<FailureContext> {
  const flag = typeof run.options.profile === 'string' ? run.options.profile.trim() : '';
  let profileName = flag || ctx.env.MMAUTH_PROFILE?.trim() || 'default';
  if (!flag && !ctx.env.MMAUTH_PROFILE?.trim()) {
    try {
      profileName = (await selectProfile(undefined, ctx, await ctx.openStore())).name;
    } catch {
      // An unreadable selection is its own error; the hint does with the default.
    }
  }
  let origin = originOfCommand(run);
  if (origin === undefined) {
    try {
      origin = (await ctx.openStore()).listOne(profileName)?.lastGrant;
    } catch {
      // A damaged config file is its own error; the hint does without it.
    }
  }
  const isSandboxed = (ctx.env.MMAUTH_SANDBOX_RUN ?? '') !== '';
  return {
    command: run.command,
    profileName,
    origin,
    ...(isSandboxed ? { sandboxVariables: CHILD_VARIABLES.filter((name) => (ctx.env[name] ?? '') !== '') } : {}),
  };
}
