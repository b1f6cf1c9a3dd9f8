/**
 * Where the store puts credentials (decisions 24), over an in-process keyring: sealed when a
 * keyring can take them, the fallback and its record, strict mode, a lost key, keys shared and
 * removed. The real addon over D-Bus is tested end to end (test/e2e/keyring.test.ts).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { MmauthError } from '../../../src/errors.js';
import type { Profile } from '../../../src/store/profile.js';
import { openProfileStore, type CredentialStoreSetting } from '../../../src/store/profile-store.js';
import { rejectedBy } from '../../support/failure.js';
import { memoryKeyring, noKeyring, type MemoryKeyring } from '../../support/memory-keyring.js';

const SECRET = 'client-secret-AAAAAAAAAAAA';
const fail = (): never => {
  throw new Error('no token listed');
};
/** What the keyring holds: keys (accounts of 32 hex digits) and access tokens' copies. */
const held = (keyring: MemoryKeyring) => {
  const accounts = [...keyring.items.keys()];
  return {
    keys: accounts.filter((a) => /^[0-9a-f]{32}$/.test(a)).length,
    copies: accounts.filter((a) => a.startsWith('access-token.')).length,
  };
};
const ACCESS = 'access-token-BBBBBBBBBBBB';
const REFRESH = 'refresh-token-CCCCCCCCCCCC';

function withToken(current: Profile): Profile {
  return {
    ...current,
    baseUrl: 'https://maps.example.com',
    clientId: 'app',
    clientSecret: SECRET,
    token: {
      accessToken: ACCESS,
      refreshToken: REFRESH,
      tokenType: 'bearer',
      scope: 'service',
      grant: 'authorization_code',
      obtainedAt: '2026-11-23T12:00:00.000Z',
      expiresAt: '2026-11-23T14:00:00.000Z',
    },
  };
}

async function open(keyring: MemoryKeyring | undefined, setting: CredentialStoreSetting = 'auto', dir?: string) {
  const configDir = dir ?? join(mkdtempSync(join(tmpdir(), 'mmauth-store-')), 'config');
  if (dir === undefined) onTestFinished(() => rmSync(join(configDir, '..'), { recursive: true, force: true }));
  const store = await openProfileStore({
    configDir,
    credentialStore: setting,
    openKeyring: keyring === undefined ? noKeyring : async () => keyring,
  });
  return { store, configDir, text: () => readFileSync(join(configDir, 'config.json'), 'utf8') };
}

describe('with a keyring', () => {
  it('seals every secret: none in the file, one key in the keyring, read gives them back', async () => {
    const keyring = memoryKeyring();
    const { store, text } = await open(keyring);
    await store.update('default', withToken);
    for (const secret of [SECRET, ACCESS, REFRESH]) expect(text()).not.toContain(secret);
    expect(held(keyring)).toEqual({ keys: 1, copies: 1 });
    const keyId = [...keyring.items.keys()].find((a) => !a.startsWith('access-token.'));
    // The access token's copy, for `token`'s cheap read: the same token, under the account the file names.
    const ref = JSON.parse(text()).profiles.default.token.access_token_ref as string;
    expect(JSON.parse(keyring.items.get(ref) ?? '{}')).toMatchObject({ v: 2, profile: 'default', token: ACCESS });
    expect(await store.readAccessToken('default', store.listOne('default') ?? fail())).toBe(ACCESS);
    expect(JSON.parse(text()).profiles.default).toMatchObject({
      credential_store: 'keyring',
      sealed: { key_id: keyId },
    });
    const read = await store.read('default');
    expect(read?.clientSecret).toBe(SECRET);
    expect(read?.token).toMatchObject({ accessToken: ACCESS, refreshToken: REFRESH });
    expect(store.list()[0]?.profile).toMatchObject({
      hasClientSecret: true,
      credentialsIn: 'keyring',
      token: { hasRefreshToken: true, plainAccessToken: undefined },
    });
  });

  it('profiles share one key; it stays when the last profile sealed with it goes (another copy of the config directory may need it); copies go', async () => {
    const keyring = memoryKeyring();
    const { store } = await open(keyring);
    await store.update('a', withToken);
    await store.update('b', withToken);
    expect(held(keyring)).toEqual({ keys: 1, copies: 2 });
    // A write that keeps the token keeps its copy; one that drops it removes it.
    await store.update('b', (current) => ({ ...current, scope: 'other' }));
    expect(held(keyring)).toEqual({ keys: 1, copies: 2 });
    await store.update('a', (current) => ({ ...current, token: undefined, clientSecret: undefined }));
    expect(held(keyring)).toEqual({ keys: 1, copies: 1 });
    await store.update('b', () => undefined);
    expect(held(keyring)).toEqual({ keys: 1, copies: 0 });
  });

  it('a key that is gone: credentials_lost (exit 4) on read, the profile without them for those who get them anew', async () => {
    const keyring = memoryKeyring();
    const first = await open(keyring);
    await first.store.update('default', withToken);
    keyring.items.clear();
    // A new process: keys are cached for the life of one.
    const { store, text } = await open(keyring, 'auto', first.configDir);
    const before = text();
    const error = await rejectedBy(() => store.read('default'));
    expect(error.code).toBe('credentials_lost');
    expect(error.message).toContain('profile "default"');
    expect(text()).toBe(before);
    const omitted = await store.read('default', { ifCredentialsLost: 'omit' });
    expect(omitted).toMatchObject({ baseUrl: 'https://maps.example.com', clientSecret: undefined, token: undefined });
    // Getting them again seals them under a new key.
    await store.update('default', withToken);
    expect(held(keyring)).toEqual({ keys: 1, copies: 1 });
    expect((await store.read('default'))?.token?.accessToken).toBe(ACCESS);
  });

  it('a keyring profile whose keyring fails: the error, never a plain-text copy, the file untouched', async () => {
    const keyring = memoryKeyring();
    const first = await open(keyring);
    await first.store.update('default', withToken);
    const { store, text } = await open(keyring, 'auto', first.configDir);
    const before = text();
    keyring.failure = new MmauthError('keyring_unavailable', 'no test keyring to use (locked)');
    const fallback: string[] = [];
    const write = await rejectedBy(() =>
      store.update('default', (current) => current, { onFileFallback: (reason) => fallback.push(reason) }),
    );
    expect(write.code).toBe('keyring_unavailable');
    expect(fallback).toEqual([]);
    expect(text()).toBe(before);
    await expect(store.assertCanStore('default')).rejects.toMatchObject({ code: 'keyring_unavailable' });
  });
});

describe('without a keyring', () => {
  it('auto: plain text in the file, recorded as a fallback, and the reason told once', async () => {
    const { store, text } = await open(undefined);
    const reasons: string[] = [];
    await store.update('default', withToken, { onFileFallback: (reason) => reasons.push(reason) });
    expect(reasons).toEqual(['no test keyring to use (none in this test)']);
    expect(text()).toContain(REFRESH);
    expect(JSON.parse(text()).profiles.default).toMatchObject({
      credential_store: 'file',
      credential_store_fallback: true,
    });
    await expect(store.assertCanStore('default')).resolves.toBeUndefined();
  });

  it('keyring: keyring_unavailable, nothing written', async () => {
    const { store, configDir } = await open(undefined, 'keyring');
    await expect(store.assertCanStore('default')).rejects.toMatchObject({ code: 'keyring_unavailable' });
    expect((await rejectedBy(() => store.update('default', withToken))).code).toBe('keyring_unavailable');
    expect(() => readFileSync(join(configDir, 'config.json'))).toThrow();
  });
});

describe('the record decides later writes (decisions 24)', () => {
  it('a fallback profile moves into the keyring at its next write; one stored with --insecure-storage stays', async () => {
    const keyring = memoryKeyring();
    const first = await open(undefined);
    await first.store.update('fell', withToken);
    await first.store.update('chose', withToken, { insecureStorage: true });
    const { store, text } = await open(keyring, 'auto', first.configDir);
    await store.update('fell', (current) => current);
    await store.update('chose', (current) => current);
    const profiles = JSON.parse(text()).profiles;
    expect(profiles.fell).toMatchObject({ credential_store: 'keyring' });
    expect(profiles.fell.client_secret).toBeUndefined();
    expect(profiles.chose).toMatchObject({ credential_store: 'file', client_secret: SECRET });
    expect(profiles.chose.credential_store_fallback).toBeUndefined();
  });

  it('MMAUTH_CREDENTIAL_STORE decides where new credentials go; reading follows the record', async () => {
    const keyring = memoryKeyring();
    const sealed = await open(keyring);
    await sealed.store.update('default', withToken);
    const asFile = await open(keyring, 'file', sealed.configDir);
    expect((await asFile.store.read('default'))?.clientSecret).toBe(SECRET);
    // A write that is no storing command's choice (a renewal) never moves credentials out of the keyring.
    await asFile.store.update('default', (current) => current);
    expect(JSON.parse(asFile.text()).profiles.default).toMatchObject({ credential_store: 'keyring' });
    expect(asFile.text()).not.toContain(SECRET);
    let isSaid = false;
    await asFile.store.update('default', (current) => current, {
      isStoring: true,
      onLeaveKeyring: () => (isSaid = true),
    });
    expect(JSON.parse(asFile.text()).profiles.default).toMatchObject({
      credential_store: 'file',
      client_secret: SECRET,
    });
    expect(isSaid).toBe(true);
    expect(held(keyring)).toEqual({ keys: 1, copies: 0 });
  });
});
