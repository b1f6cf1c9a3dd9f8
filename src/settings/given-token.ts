import { readRegularFile } from '../util/read-regular-file.js';

/** The most a token file may hold, in bytes: a bearer token and a newline, with room to spare. */
const MAX_TOKEN_FILE_BYTES = 16 * 1024;

/**
 * The access token given for this run, trimmed, or undefined for none: inside `exec` the token file
 * is the truth, so `MMAUTH_TOKEN_FILE`'s content when it names a readable, non-empty
 * regular file (read anew on every call: exec replaces it at each renewal), else `MMAUTH_TOKEN`.
 * Never throws: an unreadable file falls back to the variable.
 */
export function givenToken(env: NodeJS.ProcessEnv): string | undefined {
  const fromFile = tokenFromFile(env);
  if (fromFile !== undefined) return fromFile;
  return env.MMAUTH_TOKEN?.trim() || undefined;
}

/** Whether the token given for this run comes from exec's token file (one that a renewal replaces). */
export function isGivenTokenFromFile(env: NodeJS.ProcessEnv): boolean {
  return tokenFromFile(env) !== undefined;
}

function tokenFromFile(env: NodeJS.ProcessEnv): string | undefined {
  const path = env.MMAUTH_TOKEN_FILE;
  if (path === undefined || path === '') return undefined;
  try {
    return readRegularFile(path, MAX_TOKEN_FILE_BYTES).trim() || undefined;
  } catch {
    return undefined;
  }
}
