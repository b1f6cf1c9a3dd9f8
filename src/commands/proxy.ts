import type { Command } from '@commander-js/extra-typings';
import type { AppContext } from '../context.js';
import { MmauthError } from '../errors.js';
import { allowedPathsProblem } from '../loopback/proxy-path.js';
import { versioned } from '../ui/json-document.js';
import type { Output } from '../ui/output.js';
import { withRenewalOptions, withTokenOptions } from './options.js';
import type { UsableTokenOptions } from '../token/usable-token.js';
import type { RunningProxy } from '../token/profile-proxy.js';
import { whenAborted } from '../util/when-aborted.js';

/** Options of `mmauth proxy`. */
export interface ProxyOptions extends UsableTokenOptions {
  /** Port on 127.0.0.1; 0 (default) for a free one. */
  port: number;
  /** Comma-separated methods a program may use. */
  allowMethods?: string;
  /** Path prefixes a program may reach. */
  allowPaths?: string[];
  /** `exec --proxy`: the per-run secret every request over TCP begins its path with (never a flag). */
  pathSecret?: string;
}

/**
 * Starts the authenticating proxy for the profile (`mmauth proxy`, `exec --proxy`): the options
 * checked, then serveProfileApi; one line per request on stderr with --verbose (never a token).
 * Throws `usage` for a bad --allow-methods or --allow-paths, and what serveProfileApi throws.
 */
export async function startProfileProxy(options: ProxyOptions, ctx: AppContext, out: Output): Promise<RunningProxy> {
  const methods = options.allowMethods?.split(',').map((method) => method.trim().toUpperCase());
  if (methods?.some((method) => !/^[A-Z]+$/.test(method)) === true) {
    throw new MmauthError('usage', `--allow-methods "${options.allowMethods}" is not a list of HTTP methods`);
  }
  const pathsProblem = options.allowPaths === undefined ? undefined : allowedPathsProblem(options.allowPaths);
  if (pathsProblem !== undefined) throw new MmauthError('usage', `--allow-paths: ${pathsProblem}`);
  const { serveProfileApi } = await import('../token/profile-proxy.js');
  return serveProfileApi(
    {
      ...options,
      allowMethods: methods === undefined ? undefined : new Set(methods),
      onRequest:
        options.verbose === true
          ? (r) => out.debug(`${r.method} ${r.path} ${r.status} ${r.durationMs} ms${r.isRenewed ? ' (renewed)' : ''}`)
          : undefined,
    },
    ctx,
    out,
  );
}

/** Registers `mmauth proxy`; the logic is runProxy. */
export function registerProxy(program: Command, ctx: AppContext): void {
  withRenewalOptions(withTokenOptions(program.command('proxy')))
    .option('--port <n>', 'port on 127.0.0.1 (0: a free one)', (value) => Number(value), 0)
    .option('--allow-methods <list>', 'only these methods, comma-separated (e.g. GET,HEAD for a read-only agent)')
    .option(
      '--allow-paths <prefix...>',
      'only paths under one of these, by whole segments (/api/maps: /api/maps and /api/maps/…)',
    )
    .description(
      "serve the profile's API on 127.0.0.1 with its token added: programs call it and never hold a token (Ctrl-C stops)",
    )
    .addHelpText(
      'after',
      `
Only the profile's origin is contacted; a foreign Host, any Origin (web pages), CONNECT, TRACE, absolute
targets and redirects off the origin are refused or passed back without the token, as are paths with
dot segments or backslashes and, under --allow-methods, method overrides (X-HTTP-Method-Override,
_method). A 401 renews once and replays once (bodies up to 10 MiB).

Examples:
  $ mmauth proxy --port 8787
  $ mmauth proxy --json --allow-methods GET,HEAD      # {"url": "http://127.0.0.1:PORT", "socket": "…/api.sock"}
  $ curl --unix-socket …/api.sock http://localhost/api/me   # the socket: no other user can reach it
  $ mmauth exec --proxy -- python agent.py            # MMAUTH_API_URL, no token in the child`,
    )
    .action(async (options) => runProxy(options, ctx));
}

/** `mmauth proxy`: starts the proxy, prints its address (--json: `{"url"}`), serves until Ctrl-C (exit 0). */
export async function runProxy(options: ProxyOptions, ctx: AppContext): Promise<void> {
  const out = await ctx.output();
  const proxy = await startProfileProxy(options, ctx, out);
  if (options.json === true) out.data(JSON.stringify(versioned({ url: proxy.url, socket: proxy.socketPath })));
  else
    out.info(
      `Serving ${proxy.baseUrl} with profile "${proxy.profileName}"'s token on ${proxy.url} and on the Unix socket ${proxy.socketPath} (Ctrl-C stops)`,
    );
  await whenAborted(ctx.signal);
  await proxy.close();
}
