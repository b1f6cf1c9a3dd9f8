import type { AppContext } from '../context.js';
import { givenToken } from './given-token.js';
import type { Endpoints } from '../oauth/endpoints.js';
import type { ServerConfiguration } from '../oauth/server-configuration.js';
import type { Profile } from '../store/profile.js';
import type { ProfileStore } from '../store/profile-store.js';
import type { CommonOptions } from './setting-options.js';
import { MmauthError } from '../errors.js';
import { firstSteps } from './next-step.js';
import { isVerbose, requireBaseUrl } from './settings.js';
import { DIRECTORY_FILE, selectProfile, type ProfileSelection } from './profile-selection.js';
import { endpointsFor } from '../oauth/server-metadata.js';

/** The selected profile and the store it lives in. */
export interface LocalTarget {
  profileName: string;
  /** Which rule selected it (README "Profiles"). */
  selection: ProfileSelection;
  /** The stored profile, undefined when there is none yet. */
  profile: Profile | undefined;
  store: ProfileStore;
}

/** A LocalTarget plus the server it talks to. */
export interface Target extends LocalTarget {
  endpoints: Endpoints;
  server: ServerConfiguration;
}

/** How a command reads its profile: `getsCredentials` (login, client-credentials) reads it even when its stored credentials are lost. */
export interface ReadNeeds {
  getsCredentials?: boolean;
}

/**
 * Opens the store and reads the selected profile (selectProfile: --profile > MMAUTH_PROFILE > the
 * nearest `.mmauth-profile` > the current profile > `default`), its sealed credentials opened.
 * Throws `unknown_profile` for a directory file or current profile naming no profile,
 * `credentials_lost` (unless `getsCredentials`), keyring errors.
 */
export async function openLocalTarget(
  options: { profile?: string },
  ctx: AppContext,
  { getsCredentials = false }: ReadNeeds = {},
): Promise<LocalTarget> {
  const store = await ctx.openStore();
  const selection = await selectProfile(options.profile, ctx, store);
  const profileName = selection.name;
  const profile = await store.read(profileName, getsCredentials ? { ifCredentialsLost: 'omit' } : {});
  const local = { profileName, selection, store, profile };
  // A binding that names no profile is a mistake to say, never a profile to create silently.
  if (profile === undefined && (selection.selectedBy === 'directory' || selection.selectedBy === 'config')) {
    requireProfile(local);
  }
  return local;
}

/**
 * The selected profile, which must exist: throws `unknown_profile` (exit 4: not logged in) naming
 * it and listing the profiles there are.
 */
export function requireProfile(
  local: Pick<LocalTarget, 'profile' | 'profileName' | 'store'> & { selection?: ProfileSelection },
): Profile {
  if (local.profile !== undefined) return local.profile;
  const known = local.store.names().map((name) => `"${name}"`);
  const list = known.length === 0 ? 'there are no profiles yet' : `known profiles: ${known.join(', ')}`;
  const selection = local.selection;
  const named =
    selection?.selectedBy === 'directory'
      ? ` (named by ${selection.directoryFile ?? DIRECTORY_FILE})`
      : selection?.selectedBy === 'config'
        ? ' (the current profile: mmauth profile use)'
        : '';
  throw new MmauthError(
    'unknown_profile',
    `not logged in: there is no profile "${local.profileName}"${named}; ${list}`,
    {
      hint:
        selection?.selectedBy === 'directory'
          ? `fix or remove ${selection.directoryFile ?? DIRECTORY_FILE}, or create the profile: ${firstSteps(local.profileName)}`
          : `check --profile / MMAUTH_PROFILE, or create it: ${firstSteps(local.profileName)}`,
    },
  );
}

/**
 * Opens the local target and resolves its server: the base URL (flag > MMAUTH_BASE_URL > profile
 * > prompt), https unless loopback, and a transport bounded by --timeout that traces with --verbose.
 * With `needsStoredToken` and no MMAUTH_TOKEN, the profile must exist first (requireProfile).
 * Throws `unknown_profile`, `no_base_url`, `invalid_base_url`, `insecure_base_url`.
 */
export async function resolveTarget(
  options: CommonOptions,
  ctx: AppContext,
  { needsStoredToken = false, getsCredentials = false }: { needsStoredToken?: boolean } & ReadNeeds = {},
): Promise<Target> {
  const local = await openLocalTarget(options, ctx, { getsCredentials });
  if (needsStoredToken && givenToken(ctx.env) === undefined) requireProfile(local);
  // The server's metadata as the profile last read it (RFC 8414), for its own base URL only: no request here.
  const endpoints = endpointsFor(
    await requireBaseUrl(options.baseUrl, ctx, local.profile),
    local.profile?.serverMetadata,
  );
  const out = await ctx.output();
  const trace = isVerbose(options, ctx.env) ? (line: string) => out.debug(line) : undefined;
  return { ...local, endpoints, server: { endpoints, fetch: ctx.http(options.timeout * 1000, trace).fetch } };
}
