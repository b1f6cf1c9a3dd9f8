import { readFileSync } from 'node:fs';
import { MmauthError } from '../errors.js';
import type { TokenOrigin } from '../oauth/wire.js';
import { isRecord } from '../util/is-record.js';
import { replacePrivateFile } from '../util/private-file.js';
import type { AccessTokenRecord, EmulatorClient } from './records.js';
import type { RefreshTokenRecord } from './refresh-tokens.js';
import type { EmulatorState } from './state.js';

/** What an emulator keeps across restarts: its demo client's secret and every token it issued. */
export interface SavedState {
  clientSecret: string;
  tokens: AccessTokenRecord[];
  refreshTokens: { tokens: RefreshTokenRecord[]; previousOf: Array<[string, string]> };
}

/** The file's shape, version 1: clients by id, times in epoch ms. */
interface StateFileV1 {
  version: 1;
  client_secret: string;
  tokens: Array<Omit<AccessTokenRecord, 'client'> & { client_id: string }>;
  refresh_tokens: Array<Omit<RefreshTokenRecord, 'client'> & { client_id: string }>;
  previous_of: Array<[string, string]>;
}

/**
 * The state file `path` (`mmauth emulator --state FILE`): undefined when it does not exist yet.
 * Throws `usage` naming the file when it cannot be read or is not a version-1 state file.
 */
export function readStateFile(path: string): StateFileV1 | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if (isRecord(error) && error.code === 'ENOENT') return undefined;
    throw new MmauthError('usage', `cannot read the emulator state file ${path}`, { cause: error });
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new MmauthError('usage', `${path} is not an emulator state file (not JSON)`, { cause: error });
  }
  if (!isRecord(parsed) || parsed.version !== 1 || typeof parsed.client_secret !== 'string') {
    throw new MmauthError('usage', `${path} is not an emulator state file (version 1)`);
  }
  const isList = (value: unknown) => Array.isArray(value);
  if (!isList(parsed.tokens) || !isList(parsed.refresh_tokens) || !isList(parsed.previous_of)) {
    throw new MmauthError('usage', `${path} is not an emulator state file (its token lists are missing)`);
  }
  return parsed as unknown as StateFileV1;
}

/**
 * Takes `file`'s tokens back into `state`, each with its client as `state` has it now (records of
 * a client it no longer has are dropped).
 */
export function restoreState(state: EmulatorState, file: StateFileV1): void {
  const withClient = <T extends { client_id: string }>(record: T) => {
    const client: EmulatorClient | undefined = state.clients.get(record.client_id);
    if (client === undefined) return [];
    const { client_id: _id, ...rest } = record;
    return [{ ...rest, client }];
  };
  state.restoreTokens(
    file.tokens.flatMap(withClient).map((record) => ({ ...record, grant: record.grant as TokenOrigin })),
  );
  state.refreshTokens.restore({ tokens: file.refresh_tokens.flatMap(withClient), previousOf: file.previous_of });
}

/** The text of the state file for `state` and the demo client's `clientSecret`. */
export function stateFileText(state: EmulatorState, clientSecret: string): string {
  const byId = <T extends { client: EmulatorClient }>({ client, ...rest }: T) => ({
    ...rest,
    client_id: client.clientId,
  });
  const refresh = state.refreshTokens.records();
  const file: StateFileV1 = {
    version: 1,
    client_secret: clientSecret,
    tokens: state.tokenRecords().map(byId),
    refresh_tokens: refresh.tokens.map(byId),
    previous_of: refresh.previousOf,
  };
  return `${JSON.stringify(file)}\n`;
}

/**
 * Writes the state file `path` whole or not at all (replacePrivateFile: 0600, a new file renamed
 * over it). A reader never sees half a file; a kill leaves the old one.
 */
export function writeStateFile(path: string, text: string): void {
  replacePrivateFile(path, text);
}
