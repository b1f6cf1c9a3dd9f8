import type { Command } from '@commander-js/extra-typings';
import type { AppContext } from '../../context.js';
import { MmauthError } from '../../errors.js';
import type { StreamedResponse } from '../../http/stream-request.js';
import { parseChallengeError } from '../../oauth/describe-error.js';
import { writeApiAnswer } from '../../ui/api-output.js';
import { buildApiRequest, type ApiRequest } from './api-request.js';
import { profileFlag } from '../../settings/next-step.js';
import { MAX_TIMER_SECONDS, parseSeconds, PROFILE_HELP } from '../options.js';
import { isVerbose } from '../../settings/settings.js';
import { resolveEndpoints } from '../../oauth/endpoints.js';
import { redactUrl } from '../../http/redact.js';

/** Options of `mmauth api`. */
export interface ApiOptions {
  method?: string;
  header: string[];
  data?: string;
  field: string[];
  include?: boolean;
  silent?: boolean;
  profile?: string;
  /** The service's base URL for this run (the project's rules: it must be the origin the credentials are bound to). */
  baseUrl?: string;
  timeout: number;
  verbose?: boolean;
  /** false with --no-renew. */
  renew: boolean;
}

const collect = (value: string, previous: string[]) => [...previous, value];

/** Registers `mmauth api`; the logic is runApi. */
export function registerApi(program: Command, ctx: AppContext): void {
  program
    .command('api')
    .description(
      "make one authenticated HTTP request to the service's API with the profile's token (renewed first when needed)",
    )
    .argument('<path-or-url>', "a path (/api/…), resolved against the base URL, or a URL on the base URL's origin")
    .option('-X, --method <method>', 'HTTP method (default GET, or POST with a body)')
    .option(
      '-H, --header <name: value>',
      'a request header field (repeatable; not Authorization)',
      collect,
      [] as string[],
    )
    .option('-d, --data <body>', 'the request body: a string, @file, or @- for standard input')
    .option(
      '-f, --field <key=value>',
      'a field: query parameter with -X GET, else a member of a JSON body (repeatable)',
      collect,
      [] as string[],
    )
    .option('-i, --include', 'print the status line and response header fields before the body')
    .option('--silent', 'print no body')
    .option('--profile <name>', PROFILE_HELP)
    .option('--base-url <url>', "service base URL (env MMAUTH_BASE_URL; default: the profile's)")
    .option('--timeout <seconds>', 'bound on each request', parseSeconds(1, MAX_TIMER_SECONDS), 30)
    .option('--no-renew', 'never renew the token (no request but this one)')
    .option('--verbose', 'trace the exchange (the token redacted), status and timing on stderr')
    .addHelpText(
      'after',
      `
Exit codes: 0 for 2xx and 3xx (redirects are never followed with a token), 4 for 401/403,
1 for any other status (the body is still printed), 3 network, 2 usage.

Examples:
  $ mmauth api /api/me
  $ mmauth api -i /api/me
  $ echo '{"title": "Plans"}' | mmauth api -X POST /api/echo -d @-
  $ mmauth api /api/echo -f q=maps -X GET`,
    )
    .action(async (target, options) => runApi(target, options, ctx));
}

/**
 * One authenticated request (RFC 6750 §2.1) to `target` on the profile's server, with the token
 * `token` would print (renewed first when stale). A 401 invalid_token renews once, whatever the
 * lifetime left, and replays the (buffered) request once. The answer goes to stdout
 * (writeApiAnswer); the status decides the exit: 2xx/3xx 0, 401/403 `api_unauthorized` (4), any
 * other `api_error` (1), each after the body. Throws `foreign_url` and usage errors before any
 * connection, network errors (3).
 */
export async function runApi(target: string, options: ApiOptions, ctx: AppContext): Promise<void> {
  const out = await ctx.output();
  const { apiTokenSource, callWithToken } = await import('../../token/api-token-source.js');
  const source = await apiTokenSource(options, ctx, out);
  // The base-URL rules of every other command: https unless loopback, no userinfo, query or fragment.
  const { baseUrl } = resolveEndpoints(source.baseUrl);
  const request = await buildApiRequest(target, baseUrl, options, ctx);
  // Credential-like query values (access_token=, api_key=, …) become known secrets: no line prints them.
  redactUrl(request.url.href, ctx.secrets);
  const trace = isVerbose(options, ctx.env) ? (line: string) => out.debug(line) : undefined;
  const { response, durationMs } = await callWithToken(
    request,
    source,
    {
      timeoutSeconds: options.timeout,
      trace,
      onRenewed: () => out.info('the server refused the token (invalid_token): renewed it and sent the request again'),
    },
    ctx,
  );
  trace?.(`< ${response.status}${response.statusText === '' ? '' : ` ${response.statusText}`} (${durationMs} ms)`);
  if (response.status >= 300 && response.status < 400 && response.headers.location !== undefined) {
    out.info(`redirect (HTTP ${response.status}) to ${response.headers.location}: not followed with the token`);
  }
  await writeApiAnswer(
    response,
    ctx.stdout,
    // Colour only on a terminal (writeApiAnswer never colours a pipe), and never with NO_COLOR.
    {
      isInclude: options.include === true,
      isSilent: options.silent === true,
      isColour: (ctx.env.NO_COLOR ?? '') === '',
    },
    (line) => out.warn(line),
  );
  throwForStatus(response, request, source.profileName);
}

function throwForStatus(response: StreamedResponse, request: ApiRequest, profileName: string): void {
  const { status } = response;
  if (status < 400) return;
  const label = `${request.method} ${request.url.href} answered HTTP ${status}`;
  if (status === 401 || status === 403) {
    const challenge = parseChallengeError(response.headers['www-authenticate']);
    throw new MmauthError('api_unauthorized', `${label}${challenge === undefined ? '' : ` (${challenge.error})`}`, {
      status,
      oauthError: challenge?.error,
      hint:
        status === 403
          ? `the token lacks a scope this needs: log in with more (--scope …${profileFlag(profileName)})`
          : `log in again: mmauth login${profileFlag(profileName)}`,
    });
  }
  throw new MmauthError('api_error', label, { status });
}
