import type { Profile, StoredToken } from './profile.js';
import { accessTokenRefOf, parseProfile, parseSealed } from './profile-json.js';
import type { ProfileSecrets, SecretField } from './secrets.js';

/** A stored token as `status` lists it: everything but the secrets' values. */
export interface ListedToken extends Omit<StoredToken, 'accessToken' | 'refreshToken'> {
  /** The access token when it is kept in plain text; undefined when sealed. */
  plainAccessToken: string | undefined;
  /** The keyring account holding a copy of the sealed access token (a fast read for `token`), if any. */
  accessTokenRef: string | undefined;
  hasRefreshToken: boolean;
}

/** A profile as `status` lists it, read without opening sealed secrets: whether each is there, not its value. */
export interface ListedProfile extends Omit<Profile, 'clientSecret' | 'token' | 'pendingLogin'> {
  token: ListedToken | undefined;
  hasClientSecret: boolean;
  /** Whether a two-step login is waiting (its verifier is a secret, so only its presence is listed). */
  hasPendingLogin: boolean;
  /** Where its credentials are: `keyring` (sealed, the key in the keyring) or `file` (plain text). */
  credentialsIn: 'keyring' | 'file';
}

/** Lists one profile from its on-disk JSON form without its secrets' values. Throws ProfileFormatError. */
export function listProfile(json: unknown, where: string): ListedProfile {
  const sealed = parseSealed(json, where);
  const present = (field: SecretField) => (sealed?.fields.includes(field) === true ? '' : undefined);
  const placeholders: ProfileSecrets = {
    clientSecret: present('client_secret'),
    accessToken: present('access_token'),
    refreshToken: present('refresh_token'),
    codeVerifier: present('code_verifier'),
  };
  const { clientSecret, token, pendingLogin, ...rest } = parseProfile(json, where, placeholders);
  return {
    ...rest,
    token:
      token === undefined
        ? undefined
        : {
            tokenType: token.tokenType,
            scope: token.scope,
            grant: token.grant,
            obtainedAt: token.obtainedAt,
            expiresAt: token.expiresAt,
            plainAccessToken: sealed === undefined ? token.accessToken : undefined,
            accessTokenRef: accessTokenRefOf(json),
            hasRefreshToken: token.refreshToken !== undefined,
            ...(token.isShared === true ? { isShared: true } : {}),
            ...(token.viaDevice === true ? { viaDevice: true } : {}),
          },
    hasClientSecret: clientSecret !== undefined,
    hasPendingLogin: pendingLogin !== undefined,
    credentialsIn: sealed !== undefined || rest.credentialStore === 'keyring' ? 'keyring' : 'file',
  };
}
