import { isVisibleWord } from '../util/visible-word.js';

/** Thrown by parseProfile for a field of the wrong shape; the store adds the file name. */
export class ProfileFormatError extends Error {}

// What a stored value must look like to be one mmauth wrote (attacks 16): validated on read.

/**
 * A stored token value as mmauth wrote it: printable ASCII without spaces (what the parsers accept
 * from a server). Anything else was not written by mmauth, and is an error, never a payload (a
 * token holding terminal escapes would be written raw by `token`). The empty placeholder of a
 * listed sealed value passes.
 */
export function word<T extends string | undefined>(value: T, where: string): T {
  if (value !== undefined && value !== '' && !isVisibleWord(value)) {
    throw new ProfileFormatError(`${where} is not a token (printable ASCII without spaces)`);
  }
  return value;
}

/** A stored instant as mmauth wrote it (ISO 8601), else ProfileFormatError naming the field. */
export function instant<T extends string | undefined>(value: T, where: string): T {
  if (value !== undefined && Number.isNaN(Date.parse(value))) {
    throw new ProfileFormatError(`${where} is not a date ("${value.slice(0, 40)}")`);
  }
  return value;
}

/** The stored chain (space-separated access tokens) as a list; undefined when empty. */
export function splitChain(value: string | undefined): string[] | undefined {
  const tokens = (value ?? '').split(' ').filter((token) => token !== '');
  return tokens.length === 0 ? undefined : tokens;
}
