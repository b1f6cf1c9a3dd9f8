import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { openSealed, sealSecrets } from '../../../src/store/sealed-secrets.js';
import type { CredentialBinding } from '../../../src/store/secrets.js';

const key = randomBytes(32);
const secrets = { clientSecret: 'client-secret-0123', accessToken: 'access-0123456789', refreshToken: 'refresh-0123' };
const binding: CredentialBinding = { profileName: 'default', origin: 'https://maps.example.com', clientId: 'app' };

describe('sealSecrets / openSealed (AES-256-GCM)', () => {
  it('opens what it sealed, lists the fields in the clear, and never shows a value', () => {
    const sealed = sealSecrets(secrets, binding, 'k1', key);
    expect(sealed.fields).toEqual(['client_secret', 'access_token', 'refresh_token']);
    expect(sealed.version).toBe(2);
    expect(JSON.stringify(sealed)).not.toMatch(/client-secret|access-|refresh-/);
    expect(openSealed(sealed, binding, key)).toEqual({ ...secrets, codeVerifier: undefined, chainToRetire: undefined });
  });

  it('a fresh nonce each time: the same secrets seal differently', () => {
    const a = sealSecrets(secrets, binding, 'k1', key);
    const b = sealSecrets(secrets, binding, 'k1', key);
    expect(a.nonce).not.toBe(b.nonce);
    expect(a.ciphertext).not.toBe(b.ciphertext);
  });

  it.each([
    ['another profile', { ...binding, profileName: 'ci' }],
    ['another origin (base_url edited in the file)', { ...binding, origin: 'https://attacker.example' }],
    ['another client id', { ...binding, clientId: 'other-app' }],
  ])('refuses %s', (_name, other) => {
    expect(openSealed(sealSecrets(secrets, binding, 'k1', key), other, key)).toBeUndefined();
  });

  it('refuses another key, another key id, a downgraded version, and any altered byte', () => {
    const sealed = sealSecrets(secrets, binding, 'k1', key);
    expect(openSealed(sealed, binding, randomBytes(32))).toBeUndefined();
    expect(openSealed({ ...sealed, keyId: 'k2' }, binding, key)).toBeUndefined();
    expect(openSealed({ ...sealed, version: 1 }, binding, key)).toBeUndefined();
    const bytes = Buffer.from(sealed.ciphertext, 'base64url');
    for (const index of [0, bytes.length - 1]) {
      const altered = Buffer.from(bytes);
      altered[index] = (altered[index] ?? 0) ^ 1;
      expect(openSealed({ ...sealed, ciphertext: altered.toString('base64url') }, binding, key)).toBeUndefined();
    }
    expect(openSealed({ ...sealed, nonce: 'AAAAAAAAAAAAAAAA' }, binding, key)).toBeUndefined();
  });
});
