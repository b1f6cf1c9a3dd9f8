import { dirname } from 'node:path';
import type { Command } from '@commander-js/extra-typings';
import type { AppContext } from '../context.js';
import { MmauthError } from '../errors.js';
import { withRenewalOptions, withTokenOptions } from './options.js';
import type { UsableTokenOptions } from '../token/usable-token.js';
import type { PreparedSandbox } from '../exec/sandbox-plan.js';
import type { Output } from '../ui/output.js';
import { childEnvironment } from '../exec/child-environment.js';

/** Options of `mmauth exec`. */
export interface ExecOptions extends UsableTokenOptions {
  /** The variable the access token goes in (default MMAUTH_TOKEN). */
  tokenEnv: string;
  /** Also serve a token endpoint to the child. */
  serve?: boolean;
  /** Give the child only an authenticating proxy (MMAUTH_API_URL), no token. */
  proxy?: boolean;
  /** With --proxy: the methods and path prefixes the child may use (as `proxy`'s). */
  allowMethods?: string;
  allowPaths?: string[];
  /** Run the child in the sandbox engine, where the grant is not (Linux, macOS). */
  sandbox?: boolean;
  /** With --sandbox: more paths it may write, paths it may not read, hosts it may reach (each repeatable). */
  allowWrite?: string[];
  denyRead?: string[];
  allowHost?: string[];
  /** With --sandbox: secret-looking variables let through all the same (each repeatable). */
  passEnv?: string[];
}

/** A repeatable option's values. */
const collect = (value: string, previous: string[] | undefined) => [...(previous ?? []), value];

/** Registers `mmauth exec`; the logic is runExec. */
export function registerExec(program: Command, ctx: AppContext): void {
  withRenewalOptions(withTokenOptions(program.command('exec')))
    .argument('<command...>', 'the program to run and its arguments (after --)')
    .option('--token-env <name>', 'the variable that carries the access token', 'MMAUTH_TOKEN')
    .option('--serve', 'also serve a token endpoint to the child (MMAUTH_TOKEN_URL, MMAUTH_TOKEN_URL_AUTHORIZATION)')
    .option(
      '--proxy',
      'give the child only MMAUTH_API_URL and MMAUTH_API_SOCKET, an authenticating proxy to the API: no token at all',
    )
    .option('--allow-methods <list>', 'with --proxy: only these methods, comma-separated (as proxy)')
    .option('--allow-paths <prefix...>', 'with --proxy: only paths under these, by whole segments (as proxy)')
    .option(
      '--sandbox',
      'run the child in a sandbox (Linux, macOS): writes only in the working directory, no grant, terminal, socket or other host in its reach',
    )
    .option('--allow-write <path>', 'with --sandbox: the child may also write here (repeatable)', collect)
    .option('--deny-read <path>', 'with --sandbox: the child may not read this either (repeatable)', collect)
    .option('--allow-host <host[:port]>', 'with --sandbox: the child may also reach this host (repeatable)', collect)
    .option(
      '--pass-env <name>',
      'with --sandbox: let this variable through although its name looks secret (repeatable)',
      collect,
    )
    .description(
      'run a program with a token that stays valid while it runs: MMAUTH_TOKEN at start, MMAUTH_TOKEN_FILE kept current, --serve for an endpoint (never the refresh token or client secret)',
    )
    .addHelpText(
      'after',
      `
MMAUTH_TOKEN is good until the first renewal (on a server that rotates refresh tokens the first use
of the new token ends it), not until its expiry: a program that runs longer reads MMAUTH_TOKEN_FILE
or asks MMAUTH_TOKEN_URL (or MMAUTH_TOKEN_SOCKET) before each request, and again on a 401. Both
switch to the new token before anyone uses it, also when another mmauth process renewed it.

Examples:
  $ mmauth exec -- ./sync-maps.sh
  $ mmauth exec --profile ci --serve -- python export.py
  $ mmauth exec --token-env MAPS_TOKEN -- env | grep MAPS_TOKEN
  $ mmauth exec --proxy -- sh -c 'curl -s "$MMAUTH_API_URL/api/me"'
  $ mmauth exec --sandbox --proxy --allow-paths /api/maps -- ./agent   # a program you do not trust
  $ mmauth exec --sandbox --proxy --allow-host registry.npmjs.org -- npm test`,
    )
    .action(async (command, options) => runExec(command, options, ctx));
}

/**
 * `mmauth exec [options] -- COMMAND [ARGS…]`: gets a usable token exactly as `token` does (none:
 * exit 4, the child is not started), then runs COMMAND with stdin, stdout and stderr as they are,
 * MMAUTH_TOKEN (or --token-env) and MMAUTH_TOKEN_FILE (a 0600 file in a fresh 0700 directory, kept
 * current), and with --serve a token endpoint on 127.0.0.1 (MMAUTH_TOKEN_URL and
 * MMAUTH_TOKEN_URL_AUTHORIZATION). The token is renewed before it goes stale while the child runs
 * (keepTokenFresh). The signals of runChild's FORWARDED are forwarded; the exit code is the
 * child's, or 128 + the signal number. The endpoint closes and the directory goes when the child
 * ends. Throws what usableAccessToken throws, `usage` for a bad --token-env (a command that cannot start: exit 127 or 126).
 */
export async function runExec(command: string[], options: ExecOptions, ctx: AppContext): Promise<void> {
  const out = await ctx.output();
  const [program, ...args] = command;
  if (program === undefined) throw new MmauthError('usage', 'exec needs a command to run: mmauth exec -- COMMAND');
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(options.tokenEnv)) {
    throw new MmauthError('usage', `--token-env "${options.tokenEnv}" is not a variable name`);
  }
  if ((options.allowMethods !== undefined || options.allowPaths !== undefined) && options.proxy !== true) {
    throw new MmauthError('usage', '--allow-methods and --allow-paths go with --proxy');
  }
  const additions = [options.allowWrite, options.denyRead, options.allowHost, options.passEnv].some(
    (list) => list !== undefined,
  );
  if (additions && options.sandbox !== true) {
    throw new MmauthError('usage', '--allow-write, --deny-read, --allow-host and --pass-env go with --sandbox');
  }
  if (options.proxy === true && options.serve === true) {
    throw new MmauthError('usage', '--proxy gives the child no token: drop --serve');
  }
  // Refused before anything runs or is asked: the engine or a program it needs is missing.
  const sandbox =
    options.sandbox === true ? await (await import('./exec/sandbox-plan.js')).sandboxFor(options, ctx) : undefined;
  if (sandbox !== undefined && options.verbose === true && sandbox.heldBackEnv.length > 0) {
    out.debug(
      `sandbox: held back (names that look secret; --pass-env NAME lets one through): ${sandbox.heldBackEnv.join(', ')}`,
    );
  }
  try {
    if (options.proxy === true) return await runExecProxied(program, args, options, ctx, sandbox);
    const { supplyChildToken } = await import('../token/child-token.js');
    const supply = await supplyChildToken(options, ctx, out);
    try {
      const endpoints = [supply.baseUrl, supply.variables.MMAUTH_TOKEN_URL].flatMap((url) => url ?? []);
      const run = await sandbox?.runFor(endpoints, [supply.dir]);
      if (run !== undefined && options.verbose === true) for (const line of run.verboseLines()) out.debug(line);
      const env = childEnvironment(ctx.env, supply.variables, sandbox);
      const { runChild } = await import('../exec/run-child.js');
      ctx.setExitCode(await runChild(program, args, env, (line) => out.error(line), supply.dir, run));
      reportRunsLater(await sandbox?.review(), out, options.json === true);
    } finally {
      await supply.stop();
    }
  } finally {
    sandbox?.remove();
  }
}

/**
 * Says on stderr what the sandboxed child left that would run later (moved aside) and which files
 * the user runs on purpose it created or changed; nothing when it touched none. With --json, the
 * same as one document on stdout after the child's own output (`sandbox.moved_aside`,
 * `sandbox.changed`: schemas/exec.schema.json).
 */
function reportRunsLater(review: Awaited<ReturnType<PreparedSandbox['review']>>, out: Output, isJson: boolean): void {
  const neutralised = review?.neutralised ?? [];
  const changed = review?.changed ?? [];
  if (isJson && (neutralised.length > 0 || changed.length > 0)) {
    out.json({
      sandbox: {
        moved_aside: neutralised.map(({ path, movedTo }) => ({ path, moved_to: movedTo === '' ? null : movedTo })),
        changed,
      },
    });
  }
  for (const { path, movedTo } of neutralised) {
    out.warn(
      movedTo === ''
        ? `the sandboxed child planted ${path}, which git, a shell or mmauth would run later, and it could not be moved: remove it before you work there`
        : `the sandboxed child planted ${path}, which git, a shell or mmauth would run later: moved aside to ${movedTo}`,
    );
  }
  if (changed.length === 0) return;
  out.warn(
    `the sandboxed child changed what runs when you next work there (make, npm, direnv, CI): review before running`,
  );
  for (const path of changed) out.instruct(`  ${path}`);
}

/**
 * `exec --proxy`: the child gets MMAUTH_API_URL, the address of an authenticating proxy to the
 * profile's API (startProfileProxy), and MMAUTH_API_SOCKET, its Unix socket, and no token at all: no variable, no file, no endpoint.
 */
async function runExecProxied(
  program: string,
  args: string[],
  options: ExecOptions,
  ctx: AppContext,
  sandbox: PreparedSandbox | undefined,
): Promise<void> {
  const out = await ctx.output();
  const { startProfileProxy } = await import('./proxy.js');
  // MMAUTH_API_URL carries a per-run secret (its first path segment), on no command line: the
  // child's peer check alone would let in whoever drives the sandbox engine's proxy.
  const { randomBytes } = await import('node:crypto');
  const pathSecret = randomBytes(24).toString('base64url');
  const proxy = await startProfileProxy({ ...options, port: 0, pathSecret }, ctx, out);
  try {
    const run = await sandbox?.runFor([proxy.url], [dirname(proxy.socketPath)]);
    if (run !== undefined && options.verbose === true) for (const line of run.verboseLines()) out.debug(line);
    const variables = { MMAUTH_API_URL: proxy.url, MMAUTH_API_SOCKET: proxy.socketPath };
    const env = childEnvironment(ctx.env, variables, sandbox);
    const { runChild } = await import('../exec/run-child.js');
    ctx.setExitCode(await runChild(program, args, env, (line) => out.error(line), '', run));
    reportRunsLater(await sandbox?.review(), out, options.json === true);
  } finally {
    await proxy.close();
  }
}
