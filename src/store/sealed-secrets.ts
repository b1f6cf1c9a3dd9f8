import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { presentFields, type CredentialBinding, type ProfileSecrets, type SealedSecrets } from './secrets.js';

const NONCE_BYTES = 12;
const TAG_BYTES = 16;

/**
 * Binds a sealed blob to its format and to what decides where its secrets go (GCM's additional
 * data): version 2 to the profile name, key id, base URL origin and client id, so that editing
 * `base_url` or `client_id` in the file makes it unopenable; version 1 (written before) to the name
 * and key id only.
 */
function associatedData(version: 1 | 2, binding: CredentialBinding, keyId: string): Buffer {
  const parts =
    version === 1
      ? ['mmauth', 'v1', keyId, binding.profileName]
      : ['mmauth', 'v2', keyId, binding.profileName, binding.origin, binding.clientId];
  return Buffer.from(version === 1 ? parts.join('/') : JSON.stringify(parts), 'utf8');
}

/**
 * Encrypts `secrets` for the profile of `binding` with `key` (32 bytes) under a fresh random nonce (NIST SP
 * 800-38D: AES-256-GCM, 96-bit nonce, 128-bit tag).
 */
export function sealSecrets(
  secrets: ProfileSecrets,
  binding: CredentialBinding,
  keyId: string,
  key: Buffer,
): SealedSecrets {
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, nonce, { authTagLength: TAG_BYTES });
  cipher.setAAD(associatedData(2, binding, keyId));
  const plain = Buffer.from(JSON.stringify(secrets), 'utf8');
  const ciphertext = Buffer.concat([cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
  return {
    keyId,
    nonce: nonce.toString('base64url'),
    ciphertext: ciphertext.toString('base64url'),
    fields: presentFields(secrets),
    version: 2,
  };
}

/**
 * Decrypts what sealSecrets made for `binding`; undefined when `key` is not the key it was
 * sealed with, or the blob was altered or moved (the GCM tag does not match).
 */
export function openSealed(sealed: SealedSecrets, binding: CredentialBinding, key: Buffer): ProfileSecrets | undefined {
  try {
    const data = Buffer.from(sealed.ciphertext, 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(sealed.nonce, 'base64url'), {
      authTagLength: TAG_BYTES,
    });
    decipher.setAAD(associatedData(sealed.version, binding, sealed.keyId));
    decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
    const plain = Buffer.concat([decipher.update(data.subarray(0, data.length - TAG_BYTES)), decipher.final()]);
    const parsed: unknown = JSON.parse(plain.toString('utf8'));
    if (typeof parsed !== 'object' || parsed === null) return undefined;
    const record = parsed as Record<string, unknown>;
    const text = (key: keyof ProfileSecrets) => (typeof record[key] === 'string' ? record[key] : undefined);
    return {
      clientSecret: text('clientSecret'),
      accessToken: text('accessToken'),
      refreshToken: text('refreshToken'),
      codeVerifier: text('codeVerifier'),
      chainToRetire: text('chainToRetire'),
      replacedTokens: text('replacedTokens'),
      pendingClientSecret: text('pendingClientSecret'),
    };
  } catch {
    return undefined;
  }
}
