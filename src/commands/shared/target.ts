import type { AppContext } from '../../context.js';
import { resolveEndpoints, type Endpoints } from '../../oauth/endpoints.js';
import type { ServerConfiguration } from '../../oauth/server-configuration.js';
import type { Profile } from '../../store/profile.js';
import type { ProfileStore } from '../../store/profile-store.js';
import type { CommonOptions } from './options.js';
import { isVerbose, requireBaseUrl, resolveProfileName } from './settings.js';

/** The selected profile and the store it lives in. */
export interface LocalTarget {
  profileName: string;
  /** The stored profile, undefined when there is none yet. */
  profile: Profile | undefined;
  store: ProfileStore;
}

/** A LocalTarget plus the server it talks to. */
export interface Target extends LocalTarget {
  endpoints: Endpoints;
  server: ServerConfiguration;
}

/** Opens the store and reads the selected profile (--profile > MMAUTH_PROFILE > default). */
export async function openLocalTarget(options: { profile?: string }, ctx: AppContext): Promise<LocalTarget> {
  const profileName = resolveProfileName(options.profile, ctx.env);
  const store = await ctx.openStore();
  return { profileName, store, profile: store.read(profileName) };
}

/**
 * Opens the local target and resolves its server: the base URL (flag > MMAUTH_BASE_URL > profile
 * > prompt), https unless loopback, and a transport bounded by --timeout that traces with --verbose.
 * Throws `no_base_url`, `invalid_base_url`, `insecure_base_url`.
 */
export async function resolveTarget(options: CommonOptions, ctx: AppContext): Promise<Target> {
  const local = await openLocalTarget(options, ctx);
  const endpoints = resolveEndpoints(await requireBaseUrl(options.baseUrl, ctx, local.profile));
  const out = await ctx.output();
  const trace = isVerbose(options, ctx.env) ? (line: string) => out.debug(line) : undefined;
  return { ...local, endpoints, server: { endpoints, fetch: ctx.http(options.timeout * 1000, trace).fetch } };
}
