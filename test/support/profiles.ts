import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Writes a config file with the given profiles (on-disk form), the way mmauth would have. */
export function writeProfiles(configDir: string, profiles: Record<string, unknown>): void {
  mkdirSync(configDir, { recursive: true, mode: 0o700 });
  writeFileSync(join(configDir, 'config.json'), JSON.stringify({ profiles }), { mode: 0o600 });
}

/** An ISO 8601 instant `seconds` from now (negative: in the past). */
export const inS = (seconds: number): string => new Date(Date.now() + seconds * 1000).toISOString();

/** A stored token in its on-disk form; `expiresAt` undefined for no expiry. */
export const storedToken = (accessToken: string, expiresAt: string | undefined, grant = 'authorization_code') => ({
  access_token: accessToken,
  token_type: 'bearer',
  grant,
  obtained_at: inS(-60),
  scope: 'service',
  ...(expiresAt === undefined ? {} : { expires_at: expiresAt }),
});
