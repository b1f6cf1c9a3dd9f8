import type { AppContext } from '../context.js';
import { isSecretForClient } from '../grant/credential-binding.js';
import { endGrant } from '../grant/end-grant.js';
import { keptReplacedTokens, revokeReplacedTokens } from '../grant/replaced-tokens.js';
import { bindingOf, isSameBinding } from '../store/secrets.js';
import { endpointsFor } from '../oauth/server-metadata.js';
import type { Profile, StoredToken } from '../store/profile.js';
import type { ProfileStore, WriteIntent } from '../store/profile-store.js';
import { grantEndFields, grantEndSentence } from './grant-end-report.js';
import { traceFor } from '../settings/settings.js';

/** `replaced` of login's and client-credentials' JSON: null when nothing was replaced. */
export type ReplacedJson = { revoked: boolean; confirmed: boolean; reason: string | null } | null;

/** What the run that replaced a token knows: its client and secret, its bounds. */
export interface ReplacingRun {
  clientId: string;
  clientSecret: string | undefined;
  timeout: number;
  verbose?: boolean;
}

/** The secret that authenticates the replaced grant's client: its stored one, or this run's for the same client. */
function secretOf(replaced: Profile, run: ReplacingRun): string | undefined {
  if (replaced.clientSecret !== undefined && isSecretForClient(replaced)) return replaced.clientSecret;
  return replaced.clientId === run.clientId ? run.clientSecret : undefined;
}

/** Whether the replacing run binds the profile to the same origin and client as before. */
function isSameTarget(replaced: Profile, run: ReplacingRun, baseUrl: string | undefined): boolean {
  const now = bindingOf('', baseUrl, run.clientId === '' ? replaced.clientId : run.clientId);
  return isSameBinding(bindingOf('', replaced.baseUrl, replaced.clientId), now);
}

/** A minted token, or the request that mints it, made under the store's lock (nothing sent before the lock is held). */
export type TokenToStore = StoredToken | (() => Promise<StoredToken>);

/**
 * Stores a new grant's token in profile `profileName` (login in any flow, `login --with-token`,
 * `client-credentials`): `settings` gives what the grant sets besides the token (base URL, client
 * id, secret, scope…) from the profile as it is under the store's lock, and the access token it
 * leaves live is remembered for logout (keptReplacedTokens, the project's rules). A token already
 * minted waits for the lock whatever interrupts; one obtained by `token()` is asked
 * for under the lock, so that the wait before it is interruptible. Returns the
 * profile as it was, for endReplacedGrant, and the token stored. Throws what the store's update
 * and `token()` throw.
 */
async function storeNewGrant(
  store: ProfileStore,
  profileName: string,
  token: TokenToStore,
  settings: (current: Profile) => Partial<Profile> & { baseUrl: string },
  intent: WriteIntent,
): Promise<{ former: Profile | undefined; stored: StoredToken }> {
  let former: Profile | undefined;
  let stored: StoredToken | undefined;
  await store.update(
    profileName,
    async (current) => {
      former = current;
      const minted = typeof token === 'function' ? await token() : token;
      stored = minted;
      const next = { ...current, ...settings(current), token: minted };
      const nowMs = Date.parse(minted.obtainedAt);
      const kept = keptReplacedTokens(
        current,
        { baseUrl: next.baseUrl, clientId: next.clientId, token: minted },
        nowMs,
      );
      return { ...next, replacedTokens: kept };
    },
    { ...intent, holdsMinted: typeof token !== 'function' },
  );
  if (stored === undefined) throw new Error('internal: the grant to store was never obtained');
  return { former, stored };
}

/**
 * After a new token is stored in place of `replaced`'s (login in any flow, `login --with-token`,
 * `client-credentials --replace`), ends the replaced grant when it has a refresh token or never
 * expires (endGrant, at the origin it belongs to, with its own client), and says so; another
 * access token stays live (another process may be using it) and is remembered in the profile for
 * logout (keptReplacedTokens, the project's rules), unless the profile was rebound to another origin or
 * client (`baseUrl`: the one the new token is bound to), when it and the tokens the profile had
 * remembered are ended now. A personal token is only forgotten. Never throws: a grant that could
 * not be ended is reported with the reason.
 */
async function endReplacedGrant(
  replaced: Profile | undefined,
  next: StoredToken,
  run: ReplacingRun,
  ctx: AppContext,
  out: { info(line: string): void; warn(line: string): void },
  baseUrl = replaced?.baseUrl,
): Promise<ReplacedJson> {
  const old = replaced?.token;
  if (replaced === undefined || old === undefined || old.accessToken === next.accessToken) return null;
  if (old.grant === 'personal') {
    out.warn(
      "the personal access token it replaced is forgotten here; it stays valid on the server until you revoke it in the service's settings",
    );
    return { revoked: false, confirmed: false, reason: 'personal_token' };
  }
  // (The same token was returned above.) Rebound: another origin or client than the one replaced.
  const isRebound = replaced.baseUrl !== undefined && !isSameTarget(replaced, run, baseUrl);
  if (old.refreshToken === undefined && old.expiresAt !== undefined && !isRebound) {
    out.info(
      `  The token it replaced stays live until ${old.expiresAt} (another process may still be using it); \`mmauth logout\` ends it.`,
    );
    return { revoked: false, confirmed: false, reason: 'left_to_expire' };
  }
  try {
    if (replaced.baseUrl === undefined || replaced.clientId === undefined)
      throw new Error('its server or client is not known');
    // Ended where its server's metadata (as the profile held it) says: its own revocation endpoint.
    const endpoints = endpointsFor(replaced.baseUrl, replaced.serverMetadata);
    const trace = await traceFor(run, ctx);
    const server = { endpoints, fetch: ctx.http(run.timeout * 1000, trace).fetch };
    const client = { clientId: replaced.clientId, clientSecret: secretOf(replaced, run) };
    const target = { server, client, timeoutSeconds: run.timeout, trace };
    if (isRebound) {
      // Rebound to another server or client: what it had replaced is ended at its own origin now.
      const { revoked, failure } = await revokeReplacedTokens(server, client, replaced.replacedTokens);
      if (failure !== undefined) throw failure;
      if (revoked > 0) out.info(`  Ended ${revoked} earlier token(s) it had replaced (revoked now, or already ended).`);
    }
    const { result, accessToken } = await endGrant(old, target, ctx, (line) => out.info(`  ${line}`));
    const fields = grantEndFields(result);
    out.info(`  The grant it replaced: ${grantEndSentence(result, accessToken, endpoints.baseUrl)}.`);
    return {
      revoked: fields.revoked,
      confirmed: fields.confirmed,
      reason: fields.already_invalid ? 'already_invalid' : null,
    };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    out.warn(`could not end the grant it replaced (${message}): it may still be live on the server`);
    return { revoked: false, confirmed: false, reason: `failed: ${message}` };
  }
}

/** Where a new grant goes: the profile, its store, the write's intent (prepareStoring), the origin it is bound to. */
export interface GrantDestination {
  store: ProfileStore;
  profileName: string;
  intent: WriteIntent;
  /** The base URL of the server the new token belongs to (RFC 6749 §10.3: its only destination). */
  baseUrl: string;
}

/**
 * Stores a new grant's token in the destination's profile (storeNewGrant, dated by the token's
 * `obtainedAt`; `settings` as storeNewGrant takes them; `token` minted, or minted under the lock),
 * then ends the grant it replaced (endReplacedGrant, with `run`'s client and bounds, its lines to
 * `notices`). What every sign-in (browser, two-step, personal token, client credentials) does to
 * keep its grant. Returns login's and client-credentials' `replaced` (null when nothing was).
 * Throws what the store's update throws; ending the replaced grant never throws.
 */
export async function storeGrant(...args: Parameters<typeof storeGrantReturning>): Promise<ReplacedJson> {
  return (await storeGrantReturning(...args)).replaced;
}

/** storeGrant, resolving with the token stored too (a token minted under the lock: client-credentials). */
export async function storeGrantReturning(
  destination: GrantDestination,
  token: TokenToStore,
  settings: (current: Profile) => Partial<Profile> & { baseUrl: string },
  run: ReplacingRun,
  ctx: AppContext,
  notices: { info(line: string): void; warn(line: string): void },
): Promise<{ replaced: ReplacedJson; stored: StoredToken }> {
  const { store, profileName, intent, baseUrl } = destination;
  const { former, stored } = await storeNewGrant(store, profileName, token, settings, intent);
  return { replaced: await endReplacedGrant(former, stored, run, ctx, notices, baseUrl), stored };
}
