import type { AppContext } from '../context.js';
import { MmauthError } from '../errors.js';
import { assertProfileName, emptyProfile, type Profile } from '../store/profile.js';
import type { LogoutOptions } from './logout.js';
import { DIRECTORY_FILE, MAX_DIRECTORY_FILE_BYTES } from '../settings/profile-selection.js';
import { bindingMove } from '../grant/credential-binding.js';

/** Options of `profile create` and `profile set`: the settings a profile holds. */
export interface ProfileSettingsOptions {
  baseUrl?: string;
  clientId?: string;
  scope?: string;
  redirectUri?: string;
  replace?: boolean;
  json?: boolean;
}

/**
 * The store, and the named profile, which must exist: `unknown_profile` (exit 4, the project's rules) said
 * as a typo is (the profiles there are, and how to make this one), not as "not logged in".
 */
async function existing(name: string, ctx: AppContext) {
  const store = await ctx.openStore();
  const profileName = assertProfileName(name);
  if (store.listOne(profileName) === undefined) {
    const known = store.names().map((known) => `"${known}"`);
    const list = known.length === 0 ? 'there are no profiles yet' : `the profiles are ${known.join(', ')}`;
    throw new MmauthError('unknown_profile', `there is no profile "${profileName}": ${list}`, {
      hint: `check the name (mmauth profile list), or make it: mmauth profile create ${profileName} --base-url URL`,
    });
  }
  return { store, profileName };
}

/**
 * `profile use NAME`: makes NAME the current profile (kept in the config file, under the lock); with
 * `--directory [DIR]`, writes DIR/.mmauth-profile (the name and a newline, mode 0644, never through
 * a link) instead. Throws `unknown_profile`.
 */
export async function runProfileUse(
  name: string,
  options: { directory?: string | boolean },
  ctx: AppContext,
): Promise<void> {
  const out = await ctx.output();
  const { store, profileName } = await existing(name, ctx);
  if (options.directory === undefined) {
    await store.setCurrentProfile(profileName);
    out.success(
      `Profile "${profileName}" is now the current one (MMAUTH_PROFILE, --profile and ${DIRECTORY_FILE} files still win).`,
    );
    return;
  }
  const { resolve } = await import('node:path');
  const dir = typeof options.directory === 'string' ? resolve(ctx.cwd(), options.directory) : ctx.cwd();
  const { writeDirectoryFile } = await import('../settings/profile-settings.js');
  const path = writeDirectoryFile(dir, profileName);
  // Written by the user's own command: approved as written (attacks N12).
  await store.approveDirectoryFile(path, profileName);
  out.success(`Commands run in ${dir} or below it now use profile "${profileName}" (${path}).`);
}

/**
 * `profile create NAME --base-url URL [--client-id] [--scope] [--redirect-uri]`: a profile with
 * settings and no credentials. Throws `profile_exists` (exit 2) and the settings' usage errors.
 */
export async function runProfileCreate(name: string, options: ProfileSettingsOptions, ctx: AppContext): Promise<void> {
  const out = await ctx.output();
  const store = await ctx.openStore();
  const profileName = assertProfileName(name);
  if (options.baseUrl === undefined) throw new MmauthError('no_base_url', 'profile create needs --base-url URL');
  const { checkedProfileSettings } = await import('../settings/profile-settings.js');
  const settings = checkedProfileSettings(options);
  if (store.listOne(profileName) !== undefined) {
    throw new MmauthError('profile_exists', `a profile "${profileName}" exists already`, {
      hint: `change it with \`mmauth profile set ${profileName} …\``,
    });
  }
  await store.update(profileName, () => ({ ...emptyProfile(), ...settings }));
  if (options.json === true) out.json({ profile: profileName, created: true, ...jsonSettings(settings) });
  out.success(
    `Created profile "${profileName}" for ${settings.baseUrl ?? ''}: \`mmauth login --profile ${profileName}\` signs in.`,
  );
}

function jsonSettings(settings: Partial<Profile>): Record<string, string | null> {
  return {
    base_url: settings.baseUrl ?? null,
    client_id: settings.clientId ?? null,
    scope: settings.scope ?? null,
    redirect_uri: settings.redirectUri ?? null,
  };
}

/**
 * `profile set NAME [--base-url] [--client-id] [--scope] [--redirect-uri] [--replace]`: changes
 * settings. Another origin or client id on a profile holding credentials is refused
 * (`base_url_mismatch`, exit 2: the credential-binding rule) unless `--replace`, which ends the
 * grant first as logout does and drops the credentials.
 */
export async function runProfileSet(name: string, options: ProfileSettingsOptions, ctx: AppContext): Promise<void> {
  const out = await ctx.output();
  const { store, profileName } = await existing(name, ctx);
  const { checkedProfileSettings } = await import('../settings/profile-settings.js');
  const settings = checkedProfileSettings(options);
  const move = bindingMove(store.listOne(profileName), settings);
  if (move !== undefined) {
    if (options.replace !== true) {
      throw new MmauthError(
        'base_url_mismatch',
        `profile "${profileName}" holds credentials bound to its server and client; refusing to move it from ${move}`,
        { hint: `pass --replace to end its grant first (as logout does) and drop its credentials` },
      );
    }
    const { forgetProfileCredentials, logOutProfile } = await import('../signin/sign-out.js');
    await logOutProfile({ profile: profileName, timeout: 30 }, ctx, forgetProfileCredentials);
  }
  await store.update(profileName, (current) => ({ ...current, ...settings }));
  if (options.json === true) out.json({ profile: profileName, updated: true, ...jsonSettings(settings) });
  out.success(`Updated profile "${profileName}".`);
}

/**
 * `profile rename OLD NEW`: everything follows (store.rename: re-sealed under the new name, the
 * current pointer too). `.mmauth-profile` files elsewhere cannot be found, and the output says so.
 */
export async function runProfileRename(oldName: string, newName: string, ctx: AppContext): Promise<void> {
  const out = await ctx.output();
  const { store, profileName } = await existing(oldName, ctx);
  const target = assertProfileName(newName);
  await store.rename(profileName, target);
  out.success(`Renamed profile "${profileName}" to "${target}".`);
  out.info(
    `  ${DIRECTORY_FILE} files that name "${profileName}" cannot be found from here: bind each again with \`mmauth profile use ${target} --directory DIR\`.`,
  );
}

/**
 * `profile remove NAME [--local-only] [--json]`: ends the grant exactly as logout does (unless
 * --local-only), then deletes the profile: settings, secrets, keyring copies, pending login, the
 * current pointer. A grant that cannot be ended keeps the profile, and is thrown as logout throws it.
 */
export async function runProfileRemove(name: string, options: LogoutOptions, ctx: AppContext): Promise<void> {
  const out = await ctx.output();
  const { profileName } = await existing(name, ctx);
  const { logOutProfile } = await import('../signin/sign-out.js');
  const result = await logOutProfile({ ...options, profile: profileName }, ctx, (store, n) =>
    store.update(n, () => undefined),
  );
  if (options.json === true) out.json({ ...result, removed: true });
  out.success(`Removed profile "${profileName}".`);
}

/**
 * `profile trust [DIR]`: approves DIR's `.mmauth-profile` (default: the working directory's) with the
 * name it holds now, so that commands run there use it (attacks N12; direnv's `allow`). A later
 * change of the file needs approving again. Throws `usage` when there is no usable file there, and
 * `unknown_profile` when it names no profile.
 */
export async function runProfileTrust(directory: string | undefined, ctx: AppContext): Promise<void> {
  const out = await ctx.output();
  const { resolve, join } = await import('node:path');
  const { readRegularFile } = await import('../util/read-regular-file.js');
  const dir = resolve(ctx.cwd(), directory ?? '.');
  const path = join(dir, DIRECTORY_FILE);
  let content: string;
  try {
    content = readRegularFile(path, MAX_DIRECTORY_FILE_BYTES).trim();
  } catch (error) {
    throw new MmauthError('usage', `cannot approve ${path}: ${error instanceof Error ? error.message : String(error)}`);
  }
  const { store, profileName } = await existing(content, ctx);
  await store.approveDirectoryFile(path, profileName);
  out.success(`Approved ${path}: commands run in ${dir} or below it use profile "${profileName}".`);
}
