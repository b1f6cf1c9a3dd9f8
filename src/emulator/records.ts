import type { TokenOrigin } from '../oauth/wire.js';

/** A registered client application (spec §1). */
export interface EmulatorClient {
  /** Integer application id, shown as `application.uid` in the spec's token info. */
  uid: number;
  clientId: string;
  /** Undefined for a public client. */
  clientSecret: string | undefined;
  name: string;
  /** Registered redirect URIs; loopback IP literals match on any port (RFC 8252 §7.3). */
  redirectUris: string[];
}

/** A resource owner who can sign in on the emulator's login page. */
export interface EmulatorUser {
  id: number;
  login: string;
  password: string;
}

/** An access token the emulator issued. */
export interface AccessTokenRecord {
  token: string;
  client: EmulatorClient;
  /** Null for client credentials tokens. */
  ownerId: number | null;
  scopes: string[];
  grant: TokenOrigin;
  createdAtMs: number;
  /** Undefined: no expiry by time. */
  expiresAtMs: number | undefined;
  /** When it was revoked, epoch ms; the record is kept a while so that a 401 can say "revoked". */
  revokedAtMs?: number;
}
