import type { AppContext } from '../context.js';
import { hasErrorCode, MmauthError } from '../errors.js';
import { assertProfileName } from '../store/profile.js';
import type { ProfileStore } from '../store/profile-store.js';

/** The file that binds a directory (and everything below it) to a profile: its name and a newline. */
export const DIRECTORY_FILE = '.mmauth-profile';

/** Which rule selected the profile (README "Profiles": first match wins). */
export type SelectedBy = 'flag' | 'env' | 'directory' | 'config' | 'default';

/** The selected profile, the rule that chose it, and the directory file when that rule did. */
export interface ProfileSelection {
  name: string;
  selectedBy: SelectedBy;
  directoryFile: string | undefined;
}

/** The most of a directory file mmauth reads: a profile name (64 characters) and a newline, with room (attacks N16). */
export const MAX_DIRECTORY_FILE_BYTES = 256;

/** A directory file's content as shown in a message: printable, at most 64 characters. */
function shown(content: string): string {
  const printable = content.replace(/[^\x20-\x7e]/g, '?');
  return printable.length > 64 ? `${printable.slice(0, 64)}…` : printable;
}

/**
 * Reads the directory file at `path` (attacks N12, N16, N28): a regular file of this user's (or
 * root's) that others cannot write, of at most MAX_DIRECTORY_FILE_BYTES, opened without blocking;
 * its trimmed content. Undefined when there is no file there. Throws `directory_file_invalid`
 * naming the file and why it cannot count: a file that would choose the profile but cannot is never
 * passed over for another profile (fails closed).
 */
async function readDirectoryFile(path: string): Promise<string | undefined> {
  const { lstatSync } = await import('node:fs');
  const { readRegularFile } = await import('../util/read-regular-file.js');
  let stats: import('node:fs').Stats;
  try {
    stats = lstatSync(path);
  } catch {
    return undefined;
  }
  const uid = typeof process.getuid === 'function' ? process.getuid() : undefined;
  const isOwn = uid === undefined || stats.uid === uid || stats.uid === 0;
  if (!stats.isFile() || !isOwn || (stats.mode & 0o022) !== 0) {
    throw invalidDirectoryFile(path, "it must be a file of yours (or root's) that others cannot write");
  }
  let content: string;
  try {
    content = readRegularFile(path, MAX_DIRECTORY_FILE_BYTES).trim();
  } catch (error) {
    throw invalidDirectoryFile(path, error instanceof Error ? error.message : String(error));
  }
  if (content === '') throw invalidDirectoryFile(path, 'it names no profile');
  return content;
}

function invalidDirectoryFile(path: string, why: string): MmauthError {
  return new MmauthError('directory_file_invalid', `${path} cannot choose the profile: ${why}`, {
    details: { file: path },
  });
}

/**
 * The nearest `.mmauth-profile` from `cwd` up to `/` that may count (readDirectoryFile) and that the
 * user approved with this content (`approved`: `profile use --directory` or `profile trust`; attacks
 * N12, as direnv's `allow`): a cloned repository cannot choose the profile. The nearest file decides
 * and fails closed: one that is not approved is `directory_file_not_approved`, one that cannot count
 * `directory_file_invalid` (readDirectoryFile), each naming the file, never another profile's token.
 * Returns its path and name, or undefined when there is none.
 */
async function findDirectoryFile(
  cwd: string,
  approved: () => ReadonlyMap<string, string>,
): Promise<{ path: string; name: string } | undefined> {
  const { dirname, join } = await import('node:path');
  for (let dir = cwd; ; dir = dirname(dir)) {
    const path = join(dir, DIRECTORY_FILE);
    const content = await readDirectoryFile(path);
    if (content !== undefined) {
      if (approved().get(path) === content) return { path, name: content };
      throw new MmauthError(
        'directory_file_not_approved',
        `${path} names profile "${shown(content)}", but you have not approved it (a file in a directory you cloned could choose an account)`,
        { details: { file: path, directory: dir } },
      );
    }
    if (dirname(dir) === dir) return undefined;
  }
}

/** Runs that say a directory file's choice only with --verbose (quietDirectoryChoice). */
const quietRuns = new WeakSet<AppContext>();

/**
 * The helper forms (`token`, `header`) run on every request another tool makes: their run says a
 * directory file's choice only when asked (--verbose). The approval itself said it once
 * (`profile trust`, `profile use --directory`); every other command still says it on each run.
 */
export function quietDirectoryChoice(ctx: AppContext): void {
  quietRuns.add(ctx);
}

/** Each run's selections, by --profile value: a run selects once (the token fast path and the store read agree, a warning is said once, an `exec` child keeps its profile). */
const selections = new WeakMap<AppContext, Map<string | undefined, Promise<ProfileSelection>>>();

/**
 * The profile a command uses (README "Profiles"), first match wins: --profile, MMAUTH_PROFILE, the
 * nearest `.mmauth-profile` from the working directory up to `/`, the config file's current profile
 * (`profile use`), `default`; worked out once per run and flag. Throws `invalid_profile_name` (an
 * empty --profile too, or a directory file naming an invalid name).
 */
export function selectProfile(
  flag: string | undefined,
  ctx: AppContext,
  store: Pick<ProfileStore, 'currentProfile' | 'approvedDirectoryFiles'>,
): Promise<ProfileSelection> {
  const byFlag = selections.get(ctx) ?? new Map<string | undefined, Promise<ProfileSelection>>();
  selections.set(ctx, byFlag);
  let selection = byFlag.get(flag);
  if (selection === undefined) {
    selection = select(flag, ctx, store);
    byFlag.set(flag, selection);
  }
  return selection;
}

async function select(
  flag: string | undefined,
  ctx: AppContext,
  store: Pick<ProfileStore, 'currentProfile' | 'approvedDirectoryFiles'>,
): Promise<ProfileSelection> {
  if (flag !== undefined && flag.trim() === '') {
    throw new MmauthError('invalid_profile_name', 'the profile name is empty', { hint: 'name one: --profile NAME' });
  }
  if (flag !== undefined) return { name: assertProfileName(flag.trim()), selectedBy: 'flag', directoryFile: undefined };
  const fromEnv = ctx.env.MMAUTH_PROFILE?.trim();
  if (fromEnv) return { name: assertProfileName(fromEnv), selectedBy: 'env', directoryFile: undefined };
  // The approvals are read only when a directory file is found: `token`'s fast path reads the config once.
  const file = await findDirectoryFile(ctx.cwd(), () => store.approvedDirectoryFiles());
  // Whenever a directory file chooses, the run says so once (never silently another account),
  // except a helper form's run, which the approval told (quietDirectoryChoice).
  if (file !== undefined && !quietRuns.has(ctx))
    (await ctx.output()).info(`Using profile "${shown(file.name)}" (from ${file.path}).`);
  if (file !== undefined)
    return { name: assertProfileName(file.name), selectedBy: 'directory', directoryFile: file.path };
  const current = store.currentProfile();
  if (current !== undefined)
    return { name: assertProfileName(current), selectedBy: 'config', directoryFile: undefined };
  return { name: 'default', selectedBy: 'default', directoryFile: undefined };
}

/** Why this profile, for people: `--profile`, `MMAUTH_PROFILE`, the directory file, `profile use`, or the default. */
export function describeSelection(selection: ProfileSelection): string {
  switch (selection.selectedBy) {
    case 'flag':
      return 'selected by --profile';
    case 'env':
      return 'selected by MMAUTH_PROFILE';
    case 'directory':
      return `selected by ${selection.directoryFile ?? DIRECTORY_FILE}`;
    case 'config':
      return 'the current profile (mmauth profile use)';
    case 'default':
      return 'the default profile';
  }
}

/**
 * The selection a listing of every profile shows: selectProfile's, except that a directory file
 * that fails closed (`directory_file_not_approved`, `directory_file_invalid`) makes no profile
 * current here (an empty name), its refusal given back. Throws what selectProfile throws otherwise.
 */
export async function selectionForListing(
  ctx: AppContext,
  store: Pick<ProfileStore, 'currentProfile' | 'approvedDirectoryFiles'>,
): Promise<{ selection: ProfileSelection; refusal: MmauthError | undefined }> {
  try {
    return { selection: await selectProfile(undefined, ctx, store), refusal: undefined };
  } catch (error) {
    if (!hasErrorCode(error, 'directory_file_not_approved') && !hasErrorCode(error, 'directory_file_invalid'))
      throw error;
    return { selection: { name: '', selectedBy: 'directory', directoryFile: error.details.file }, refusal: error };
  }
}
