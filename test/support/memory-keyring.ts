import { MmauthError } from '../../src/errors.js';
import type { Keyring } from '../../src/store/keyring.js';

/** An in-process keyring for the command tests: a Map, plus what it was asked. The real addon is tested end to end. */
export interface MemoryKeyring extends Keyring {
  items: Map<string, string>;
  /** When set, every call fails with it (a locked or refusing keyring). */
  failure: MmauthError | undefined;
}

/** A keyring holding its items in a Map. */
export function memoryKeyring(): MemoryKeyring {
  const keyring: MemoryKeyring = {
    name: 'test keyring',
    items: new Map(),
    failure: undefined,
    get: async (account) => {
      if (keyring.failure !== undefined) throw keyring.failure;
      return keyring.items.get(account);
    },
    set: async (account, value) => {
      if (keyring.failure !== undefined) throw keyring.failure;
      keyring.items.set(account, value);
    },
    delete: async (account) => {
      if (keyring.failure !== undefined) throw keyring.failure;
      return keyring.items.delete(account);
    },
  };
  return keyring;
}

/** No keyring at all, as on a machine without a session bus. */
export async function noKeyring(): Promise<Keyring> {
  throw new MmauthError('keyring_unavailable', 'no test keyring to use (none in this test)');
}
