import type { AppContext } from '../context.js';
import { isMmauthError, type ErrorCode, type MmauthError } from '../errors.js';
import { isSecretForClient } from '../grant/credential-binding.js';
import { DEFAULT_SCOPE } from '../oauth/wire.js';
import { describeSelection, type ProfileSelection } from '../settings/profile-selection.js';
import { pickSetting } from '../settings/settings.js';
import type { Profile } from '../store/profile.js';
import type { ProfileStore } from '../store/profile-store.js';
import { checkCallbackPath } from './doctor-callback-path.js';
import {
  checkBaseUrl,
  checkBrowser,
  checkConfigFiles,
  checkLoopback,
  checkTokenEndpoint,
  fail,
  skip,
  type Check,
} from './doctor-checks.js';
import { checkAuthorization, checkClientSecret, checkStoredToken } from './doctor-grant-checks.js';
import { checkKeyring } from './doctor-keyring.js';
import { checkServerMetadata } from './doctor-metadata.js';
import { checkSandbox } from './doctor-sandbox.js';

/** What opening the config file may throw that is a finding of the diagnosis, which then goes on. */
export const CONFIG_FAILURES = new Set<string>(['store_malformed', 'store_unreadable', 'store_insecure']);

/** What reading the profile may throw that the keyring check reports instead. */
const KEYRING_FAILURES = new Set<ErrorCode>(['credentials_lost', 'keyring_unavailable', 'keyring_failed']);

/** What a diagnosis is run with: the settings given for this run, and how its requests go. */
export interface DiagnosisOptions {
  /** The server to check instead of the profile's (the command's --base-url). */
  baseUrl?: string | undefined;
  /** The client to check instead of the profile's. */
  clientId?: string | undefined;
  /** Seconds, for each request. */
  timeout: number;
  /** Each HTTP exchange, secrets redacted (verbose), or undefined. */
  trace?: ((line: string) => void) | undefined;
}

/**
 * Every check of the profile `selection` names in `store`, in order: the profile and the config
 * files, the keyring, the base URL, the server's metadata (RFC 8414, compared with the profile's
 * copy), the callback path, the token endpoint, then (when it answers) the authorization request,
 * the client secret and the stored token (token info; sent only to the profile's own server), and
 * the browser, the loopback listener and the sandbox. A keyring that cannot open the profile is
 * the keyring check's finding: the checks that need its credentials do without them. Never throws
 * for a check; throws what reading the store throws otherwise.
 */
export async function diagnoseProfile(
  store: ProfileStore,
  selection: ProfileSelection,
  options: DiagnosisOptions,
  ctx: AppContext,
): Promise<Check[]> {
  const profileName = selection.name;
  let readFailure: unknown;
  const profile = await store.read(profileName).catch(async (error: unknown) => {
    if (!isMmauthError(error) || !KEYRING_FAILURES.has(error.code)) throw error;
    readFailure = error;
    return store.read(profileName, { ifCredentialsLost: 'omit' }).catch(() => undefined);
  });
  const listed = store.listOne(profileName);
  // The settings are in the readable part of the file whatever the keyring does.
  const settings: Profile | undefined =
    profile ??
    (listed === undefined
      ? undefined
      : { ...listed, clientSecret: undefined, token: undefined, pendingLogin: undefined });
  const checks: Check[] = [
    { name: 'profile', status: 'ok', detail: `${profileName} (${describeSelection(selection)})` },
    ...checkConfigFiles(store.path),
  ];
  checks.push(await checkKeyring(store, profileName, listed, readFailure, ctx.env));
  const base = checkBaseUrl(pickSetting(options.baseUrl, ctx.env.MMAUTH_BASE_URL, settings?.baseUrl), ctx.env);
  checks.push(...base.checks);
  if (base.endpoints !== undefined) {
    const fetch = ctx.http(options.timeout * 1000, options.trace).fetch;
    // The server's metadata (RFC 8414), read now and compared with the profile's copy; its endpoints are the ones checked.
    const metadata = await checkServerMetadata({ endpoints: base.endpoints, fetch }, settings?.serverMetadata);
    checks.push(...metadata.checks);
    checks.push(checkCallbackPath(store, profileName, base.endpoints.baseUrl, settings));
    const server = { endpoints: metadata.endpoints, fetch };
    const reachable = await checkTokenEndpoint(server, ctx.nowMs());
    checks.push(...reachable);
    if (reachable[0]?.status !== 'fail') {
      const clientId = pickSetting(options.clientId, ctx.env.MMAUTH_CLIENT_ID, settings?.clientId);
      const scope = settings?.scope ?? DEFAULT_SCOPE;
      checks.push(await checkAuthorization(server, listedGrant(settings, listed), clientId, scope));
      const storedSecret =
        settings !== undefined && isSecretForClient(settings, clientId) ? settings.clientSecret : undefined;
      const secretCheck = await checkClientSecret(
        server,
        clientId,
        pickSetting(undefined, ctx.env.MMAUTH_CLIENT_SECRET, storedSecret),
      );
      checks.push(secretCheck);
      const isSameServer =
        settings?.baseUrl === undefined || new URL(settings.baseUrl).origin === new URL(base.endpoints.baseUrl).origin;
      // The stored token goes only to its own server; a keyring that cannot open it is the keyring check's finding.
      if (isSameServer && readFailure === undefined)
        checks.push(await checkStoredToken(server, profile, profileName, ctx, secretCheck.status === 'ok'));
    }
  }
  // A client-credentials profile never opens a browser: no warning about one.
  const grantOf = listedGrant(settings, listed);
  const isClientOnly = (grantOf?.token?.grant ?? grantOf?.lastGrant) === 'client_credentials';
  checks.push(
    isClientOnly
      ? skip('browser', 'not used by this profile (client credentials)')
      : checkBrowser(ctx.env, ctx.platform),
    await checkLoopback(),
    await checkSandbox(ctx),
  );
  return checks;
}

/**
 * The checks when the config file cannot be opened (`failure`: one of CONFIG_FAILURES): that
 * finding with `fix`, then every check that needs no profile — the server that `options.baseUrl`
 * or MMAUTH_BASE_URL names (its metadata and token endpoint), the browser, the loopback listener
 * and the sandbox. Never reads the file again and never throws for a check.
 */
export async function diagnoseWithoutConfig(
  failure: MmauthError,
  fix: string | undefined,
  options: DiagnosisOptions,
  ctx: AppContext,
): Promise<Check[]> {
  const checks: Check[] = [
    fail('config file', failure.message, fix ?? 'fix or move the file aside; mmauth never resets it by itself'),
    skip('profile', 'cannot tell: the config file cannot be read'),
  ];
  const base = checkBaseUrl(pickSetting(options.baseUrl, ctx.env.MMAUTH_BASE_URL, undefined), ctx.env);
  if (base.endpoints === undefined) {
    checks.push(skip('server', 'no --base-url or MMAUTH_BASE_URL to check while the config file cannot be read'));
  } else {
    checks.push(...base.checks);
    const fetch = ctx.http(options.timeout * 1000, options.trace).fetch;
    const metadata = await checkServerMetadata({ endpoints: base.endpoints, fetch }, undefined);
    checks.push(...metadata.checks);
    checks.push(...(await checkTokenEndpoint({ endpoints: metadata.endpoints, fetch }, ctx.nowMs())));
  }
  checks.push(checkBrowser(ctx.env, ctx.platform), await checkLoopback(), await checkSandbox(ctx));
  return checks;
}

/** The profile as the authorization check judges it: with its token's grant even when the token cannot be opened. */
function listedGrant(settings: Profile | undefined, listed: { lastGrant?: Profile['lastGrant'] } | undefined) {
  if (settings === undefined || settings.token !== undefined) return settings;
  return { ...settings, lastGrant: settings.lastGrant ?? listed?.lastGrant };
}
