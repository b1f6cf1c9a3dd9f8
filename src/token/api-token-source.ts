import type { AppContext } from '../context.js';
import { givenToken, isGivenTokenFromFile } from '../settings/given-token.js';
import { MmauthError } from '../errors.js';
import { assertCredentialOrigin } from '../grant/credential-binding.js';
import { renewalOf, renewToken } from '../grant/renewal.js';
import { sendWithToken } from '../http/authenticated-request.js';
import type { StreamedResponse } from '../http/stream-request.js';
import { parseChallengeError } from '../oauth/describe-error.js';
import { profileFlag } from '../settings/next-step.js';
import { agentSocketOf, pickSetting } from '../settings/settings.js';
import { openLocalTarget, requireProfile } from '../settings/target.js';
import type { Output } from '../ui/output.js';
import { monotonicMs } from '../util/monotonic.js';
import { agentTokenAfterRefusal } from './agent-token.js';
import { usableAccessToken } from './usable-token.js';

/** What of `api`'s options says where its token comes from. */
export interface ApiTokenOptions {
  profile?: string;
  /** The service's base URL for this run (the project's rules: it must be the origin the credentials are bound to). */
  baseUrl?: string;
  timeout: number;
  verbose?: boolean;
  /** false with --no-renew. */
  renew: boolean;
}

/** Where `api` takes its token and base URL from: the local profile, or the agent (MMAUTH_AGENT_SOCK). */
export interface ApiTokenSource {
  profileName: string;
  /** The base URL the request goes to (not yet checked by resolveEndpoints). */
  baseUrl: string;
  /** The token to send (usableAccessToken: renewed first when stale), asked for once the request is built. */
  token(): Promise<{ accessToken: string; canReplay: boolean }>;
  /** The token after a 401 invalid_token: renewed (one renewal across processes, or the agent's). */
  renewAfterRefusal(trace: ((line: string) => void) | undefined): Promise<string>;
}

/**
 * The token and base URL of `api`'s request: with an agent named, the agent's profile, its base URL
 * and its token (asked at once: the agent holds the base URL)
 * (a --base-url on another origin is `base_url_mismatch`: the token goes only to its own server) and
 * its renewal after a refusal; else the local profile's as `token` hands it out, bound to its origin.
 * Throws `no_base_url`, `base_url_mismatch`, and what usableAccessToken throws.
 */
export async function apiTokenSource(options: ApiTokenOptions, ctx: AppContext, out: Output): Promise<ApiTokenSource> {
  const agentSocket = agentSocketOf(ctx.env);
  if (agentSocket !== undefined) {
    const choice = await usableAccessToken({ ...options, minTtl: 0, json: false }, ctx, (line) => out.warn(line));
    const baseUrl = choice.baseUrl;
    if (baseUrl === undefined) {
      throw new MmauthError('no_base_url', `the agent's profile "${choice.profileName}" has no base URL`);
    }
    if (options.baseUrl !== undefined && new URL(options.baseUrl).origin !== new URL(baseUrl).origin) {
      throw new MmauthError(
        'base_url_mismatch',
        `--base-url ${options.baseUrl} is not the server of the agent's profile "${choice.profileName}" (${baseUrl})`,
      );
    }
    return {
      profileName: choice.profileName,
      baseUrl,
      token: () => Promise.resolve({ accessToken: choice.accessToken, canReplay: options.renew }),
      async renewAfterRefusal() {
        const renewed = await agentTokenAfterRefusal(
          agentSocket,
          choice.profileName,
          choice.accessToken,
          options.timeout,
          ctx,
        );
        return renewed.accessToken;
      },
    };
  }
  const local = await openLocalTarget(options, ctx);
  if (givenToken(ctx.env) === undefined) requireProfile(local);
  const given = pickSetting(options.baseUrl, ctx.env.MMAUTH_BASE_URL, local.profile?.baseUrl);
  // A stored token goes only to its own origin; a token given for this run may go to the URL given.
  if (givenToken(ctx.env) === undefined) assertCredentialOrigin(local.profileName, local.profile, options.baseUrl);
  if (given === undefined) {
    throw new MmauthError('no_base_url', 'no base URL', {
      hint: `log in first, or set MMAUTH_BASE_URL${profileFlag(local.profileName)}`,
    });
  }
  let choice: Awaited<ReturnType<typeof usableAccessToken>> | undefined;
  const profile = local.profile;
  return {
    profileName: local.profileName,
    baseUrl: given,
    async token() {
      choice = await usableAccessToken({ ...options, minTtl: 0, json: false }, ctx, (line) => out.warn(line));
      const stored = choice.stored;
      // The body is buffered (MAX_API_BODY_BYTES): a replay needs only a token mmauth can renew,
      // or exec's token file, which its parent renews.
      const canRenew = stored !== undefined && profile !== undefined && renewalOf(profile, ctx.env) !== 'none';
      const canReplay = options.renew && (canRenew || (stored === undefined && isGivenTokenFromFile(ctx.env)));
      return { accessToken: choice.accessToken, canReplay };
    },
    async renewAfterRefusal(trace) {
      const stored = choice?.stored;
      if (stored === undefined) return fileTokenAfterRefusal(ctx, choice?.accessToken ?? '');
      const renewed = await renewToken(
        stored,
        {
          profileName: local.profileName,
          store: local.store,
          timeoutSeconds: options.timeout,
          trace,
          isAccessTokenRefused: true,
        },
        ctx,
      );
      return renewed.accessToken;
    },
  };
}

/** How long a refused token from exec's file waits for the file to change (its parent's renewal hand-over is 150 ms), in ms. */
const FILE_RENEWAL_WAIT_MS = 2_000;

/**
 * The token in exec's file after the server refused `refused`: the file read anew
 * until it holds another token (exec's parent replaces it at each renewal), for at most
 * FILE_RENEWAL_WAIT_MS; the same token when it never changes (the replay is then refused as well).
 */
async function fileTokenAfterRefusal(ctx: AppContext, refused: string): Promise<string> {
  const endMs = monotonicMs() + FILE_RENEWAL_WAIT_MS;
  for (;;) {
    const current = givenToken(ctx.env) ?? refused;
    if (current !== refused || monotonicMs() >= endMs) return current;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Whether the answer says the token itself was refused: a 401 whose challenge says invalid_token (RFC 6750 §3.1). */
function isInvalidToken(response: StreamedResponse): boolean {
  return (
    response.status === 401 && parseChallengeError(response.headers['www-authenticate'])?.error === 'invalid_token'
  );
}

/**
 * Sends `request` with `source`'s token (RFC 6750 §2.1), streamed, bounded by `timeoutSeconds`; a
 * 401 invalid_token renews once (source.renewAfterRefusal, whatever the lifetime left; `onRenewed`
 * is told) and replays the buffered request once when the token can be renewed. Resolves with the
 * final answer, refused or not, and the ms from the first byte sent (not counting the token's
 * wait); throws network errors and what the renewal throws.
 */
export async function callWithToken(
  request: { url: URL; method: string; headers: Record<string, string>; body: Uint8Array | undefined },
  source: ApiTokenSource,
  options: { timeoutSeconds: number; trace: ((line: string) => void) | undefined; onRenewed: () => void },
  ctx: AppContext,
): Promise<{ response: StreamedResponse; durationMs: number }> {
  const { accessToken, canReplay } = await source.token();
  const startedMs = monotonicMs();
  ctx.secrets.remember(accessToken);
  const { trace } = options;
  const send = (accessToken: string) =>
    ctx.stream(
      request.url,
      {
        method: request.method,
        headers: { ...request.headers, authorization: `Bearer ${accessToken}` },
        body: request.body,
      },
      { timeoutMs: options.timeoutSeconds * 1000, secrets: [accessToken], ...(trace === undefined ? {} : { trace }) },
    );
  const tokens = {
    current: () => Promise.resolve(accessToken),
    async renewAfterRefusal() {
      const renewed = await source.renewAfterRefusal(trace);
      options.onRenewed();
      return renewed;
    },
  };
  const { answer } = await sendWithToken(send, tokens, {
    isRefused: isInvalidToken,
    canReplay,
    discard: (refused) => void refused.body.resume(),
  });
  return { response: answer, durationMs: Math.round(monotonicMs() - startedMs) };
}
