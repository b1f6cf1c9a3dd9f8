import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { openSealed, sealSecrets } from '../../../src/store/sealed-secrets.js';

const key = randomBytes(32);
const secrets = { clientSecret: 'client-secret-0123', accessToken: 'access-0123456789', refreshToken: 'refresh-0123' };

describe('sealSecrets / openSealed (AES-256-GCM)', () => {
  it('opens what it sealed, lists the fields in the clear, and never shows a value', () => {
    const sealed = sealSecrets(secrets, 'default', 'k1', key);
    expect(sealed.fields).toEqual(['client_secret', 'access_token', 'refresh_token']);
    expect(JSON.stringify(sealed)).not.toMatch(/client-secret|access-|refresh-/);
    expect(openSealed(sealed, 'default', key)).toEqual({ ...secrets, codeVerifier: undefined });
  });

  it('a fresh nonce each time: the same secrets seal differently', () => {
    const a = sealSecrets(secrets, 'default', 'k1', key);
    const b = sealSecrets(secrets, 'default', 'k1', key);
    expect(a.nonce).not.toBe(b.nonce);
    expect(a.ciphertext).not.toBe(b.ciphertext);
  });

  it('refuses another key, another profile, another key id, and any altered byte', () => {
    const sealed = sealSecrets(secrets, 'default', 'k1', key);
    expect(openSealed(sealed, 'default', randomBytes(32))).toBeUndefined();
    expect(openSealed(sealed, 'ci', key)).toBeUndefined();
    expect(openSealed({ ...sealed, keyId: 'k2' }, 'default', key)).toBeUndefined();
    const bytes = Buffer.from(sealed.ciphertext, 'base64url');
    for (const index of [0, bytes.length - 1]) {
      const altered = Buffer.from(bytes);
      altered[index] = (altered[index] ?? 0) ^ 1;
      expect(openSealed({ ...sealed, ciphertext: altered.toString('base64url') }, 'default', key)).toBeUndefined();
    }
    expect(openSealed({ ...sealed, nonce: 'AAAAAAAAAAAAAAAA' }, 'default', key)).toBeUndefined();
  });
});
