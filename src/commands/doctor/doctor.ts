import type { Command } from '@commander-js/extra-typings';
import type { AppContext } from '../../context.js';
import { isMmauthError, MmauthError, type ErrorCode } from '../../errors.js';
import { DEFAULT_SCOPE } from '../../oauth/wire.js';
import {
  checkBaseUrl,
  checkBrowser,
  checkConfigFiles,
  checkLoopback,
  checkTokenEndpoint,
  skip,
  type Check,
} from '../../diagnosis/doctor-checks.js';
import { checkAuthorization, checkClientSecret, checkStoredToken } from '../../diagnosis/doctor-grant-checks.js';
import { isSecretForClient } from '../../grant/credential-binding.js';
import type { Profile } from '../../store/profile.js';
import type { ProfileStore } from '../../store/profile-store.js';
import { MAX_TIMER_SECONDS, parseSeconds, PROFILE_HELP, type LocalOptions } from '../options.js';
import { checkKeyring } from '../../diagnosis/doctor-keyring.js';
import { checkServerMetadata } from '../../diagnosis/doctor-metadata.js';
import { checkCallbackPath } from '../../diagnosis/doctor-callback-path.js';
import { checkSandbox } from '../../diagnosis/doctor-sandbox.js';
import { checksWithoutConfig, CONFIG_FAILURES } from './doctor-without-config.js';
import type { Output } from '../../ui/output.js';
import { withoutAgent } from '../local-only-notice.js';
import { isVerbose, pickSetting } from '../../settings/settings.js';
import { describeSelection, selectProfile } from '../../settings/profile-selection.js';
import { requireProfile } from '../../settings/target.js';

/** What reading the profile may throw that the keyring check reports instead. */
const KEYRING_FAILURES = new Set<ErrorCode>(['credentials_lost', 'keyring_unavailable', 'keyring_failed']);

/** Options of `mmauth doctor`. */
export interface DoctorOptions extends LocalOptions {
  baseUrl?: string;
  clientId?: string;
  /** Seconds, for each request. */
  timeout: number;
}

/** Registers `mmauth doctor`; the logic is runDoctor. */
export function registerDoctor(program: Command, ctx: AppContext): void {
  program
    .command('doctor')
    .description(
      'check the config, the server, the client registration, the stored token, the clock and the browser; each with its fix',
    )
    .option('--profile <name>', PROFILE_HELP)
    .option('--base-url <url>', "service base URL (env MMAUTH_BASE_URL; default: the profile's)")
    .option('--client-id <id>', "client id (env MMAUTH_CLIENT_ID; default: the profile's)")
    .option('--timeout <seconds>', 'bound on each request', parseSeconds(1, MAX_TIMER_SECONDS), 10)
    .option('--json', 'print one JSON document on stdout')
    .option('--verbose', 'trace every HTTP exchange (secrets redacted)')
    .addHelpText(
      'after',
      `
Exit 0 when no check failed (warnings allowed), 1 otherwise. Never prints a secret.

Examples:
  $ mmauth doctor
  $ mmauth doctor --profile work --json`,
    )
    .action(async (options) => runDoctor(options, ctx));
}

/**
 * Runs every check (shared/doctor-checks.ts) for the profile and reports each line ok/warn/fail
 * with its fix; --json prints `{profile, ok, checks: [{name, status, detail, fix}]}`. Throws
 * `doctor_failed` (exit 1) after printing when a check failed; warnings alone exit 0.
 */
export async function runDoctor(options: DoctorOptions, given: AppContext): Promise<void> {
  // This machine's own profile and setup, whatever agent MMAUTH_AGENT_SOCK names.
  const ctx = withoutAgent(given);
  const out = await ctx.output();
  // A config file that cannot be opened is a finding; the checks that need no profile still run.
  let store: ProfileStore;
  try {
    store = await ctx.openStore();
    store.currentProfile(); // reads the file: one that cannot be read is a finding, not a stop
  } catch (error) {
    if (!isMmauthError(error) || !CONFIG_FAILURES.has(error.code)) throw error;
    const profileName = options.profile ?? (ctx.env.MMAUTH_PROFILE?.trim() || 'default');
    return reportChecks(profileName, await checksWithoutConfig(error, options, ctx, out), options, out);
  }
  const selection = await selectProfile(options.profile, ctx, store);
  const profileName = selection.name;
  // A profile named by a rule (not the default) must exist: `doctor --profile typo` is unknown_profile.
  if (selection.selectedBy !== 'default' && store.listOne(profileName) === undefined) {
    requireProfile({ profile: undefined, profileName, store, selection });
  }
  // A keyring that cannot open the profile is a finding (the keyring check), not a stop: the
  // checks that need its credentials do without them.
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
  const baseUrl = pickSetting(options.baseUrl, ctx.env.MMAUTH_BASE_URL, settings?.baseUrl);
  const base = checkBaseUrl(baseUrl, ctx.env);
  checks.push(...base.checks);
  if (base.endpoints !== undefined) {
    const trace = isVerbose(options, ctx.env) ? (line: string) => out.debug(line) : undefined;
    const fetch = ctx.http(options.timeout * 1000, trace).fetch;
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
        settings !== undefined && isSecretForClient(settings, clientId) ? settings?.clientSecret : undefined;
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
  reportChecks(profileName, checks, options, out);
}

/**
 * Prints `checks` (a line each, or with --json `{profile, ok, checks: [{name, status, detail, fix}]}`)
 * and throws `doctor_failed` (exit 1) after printing when one failed; warnings alone pass.
 */
function reportChecks(profileName: string, checks: readonly Check[], options: DoctorOptions, out: Output): void {
  const isOk = checks.every((check) => check.status !== 'fail');
  if (options.json === true)
    out.json(
      { profile: profileName, ok: isOk, checks: checks.map((c) => ({ ...c, fix: c.fix ?? null })) },
      { redact: true },
    );
  for (const check of checks) {
    const line = `${check.status.padEnd(4)}  ${check.name}: ${check.detail}`;
    if (check.status === 'fail') out.failed(line, check.fix);
    else if (check.status === 'warn') out.warn(`${line}${check.fix === undefined ? '' : ` — ${check.fix}`}`);
    else if (check.status === 'skip') out.info(`- ${line}`);
    else out.info(`✓ ${line}`);
  }
  if (!isOk) {
    const failed = checks.filter((check) => check.status === 'fail').map((check) => check.name);
    throw new MmauthError(
      'doctor_failed',
      `${failed.length} check${failed.length === 1 ? '' : 's'} failed: ${failed.join(', ')}`,
    );
  }
}

/** The profile as the authorization check judges it: with its token's grant even when the token cannot be opened. */
function listedGrant(settings: Profile | undefined, listed: { lastGrant?: Profile['lastGrant'] } | undefined) {
  if (settings === undefined || settings.token !== undefined) return settings;
  return { ...settings, lastGrant: settings.lastGrant ?? listed?.lastGrant };
}
