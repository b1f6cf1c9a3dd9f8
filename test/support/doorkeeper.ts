import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';
import { makeScratchDir } from './cli.js';

/** One access token record as the real server holds it (GET /_test/tokens). */
export interface DoorkeeperToken {
  id: number;
  token: string;
  refresh_token: string | null;
  revoked: boolean;
  /** When it was revoked, epoch ms (the server's clock: this machine's), or null. */
  revoked_at_ms: number | null;
  expired: boolean;
  application_id: number;
  resource_owner_id: number | null;
}

/** A running Doorkeeper 5.5 at `baseUrl` (mounted at /oauth2) with one confidential client. */
export interface TestDoorkeeper {
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  /** Every access token record, oldest first. */
  tokens(): Promise<DoorkeeperToken[]>;
  /** Environment for a spawned mmauth pointing at this server, with the config dir (file store). */
  env(configDir: string, extra?: Record<string, string | undefined>): Record<string, string | undefined>;
}

/** Options of startDoorkeeper: the server's own settings (Doorkeeper's names). */
export interface DoorkeeperOptions {
  /** access_token_expires_in, in seconds (default 7200). */
  accessTokenExpiresInS?: number;
  revokePreviousClientCredentialsToken?: boolean;
  reuseAccessToken?: boolean;
  /** The device grant's poll interval and code lifetime, in seconds (defaults 5 and 600). */
  deviceIntervalS?: number;
  deviceLifetimeS?: number;
  /** The client's registered redirect URIs (default http://127.0.0.1/callback; loopback ports are ignored). */
  redirectUris?: string[];
}

/**
 * Starts a real Doorkeeper 5.5 (Debian's ruby-doorkeeper on Rails 6.1 and SQLite, served by
 * Debian's puma) on 127.0.0.1 port 0 with `test/support/doorkeeper/config.ru`; stopped when the
 * test ends. Fails (never skips) when the packages are missing: `scripts/system-packages.sh`
 * installs them.
 */
export async function startDoorkeeper(options: DoorkeeperOptions = {}): Promise<TestDoorkeeper> {
  const dir = makeScratchDir('mmauth-doorkeeper-');
  const clientId = `mmauth-${randomBytes(6).toString('hex')}`;
  const clientSecret = randomBytes(24).toString('hex');
  const app = join(import.meta.dirname, 'doorkeeper', 'config.ru');
  const child = spawn('puma', ['-b', 'tcp://127.0.0.1:0', '-t', '1:4', '-e', 'production', '--quiet', app], {
    cwd: dir,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: dir,
      LANG: 'C.UTF-8',
      DK_DB: join(dir, 'db.sqlite3'),
      DK_CLIENT_ID: clientId,
      DK_CLIENT_SECRET: clientSecret,
      DK_TTL: String(options.accessTokenExpiresInS ?? 7200),
      DK_REDIRECT_URIS: (options.redirectUris ?? ['http://127.0.0.1/callback']).join('\n'),
      DK_REVOKE_PREVIOUS_CC: options.revokePreviousClientCredentialsToken === true ? '1' : '0',
      DK_REUSE: options.reuseAccessToken === true ? '1' : '0',
      DK_DEVICE_INTERVAL: String(options.deviceIntervalS ?? 5),
      DK_DEVICE_LIFETIME: String(options.deviceLifetimeS ?? 600),
    },
  });
  onTestFinished(() => void child.kill('SIGKILL'));
  let output = '';
  const port = await new Promise<number>((resolve, reject) => {
    // Rails boots in 2–4 s on a quiet machine; a loaded one takes longer.
    const timer = setTimeout(() => reject(new Error(`Doorkeeper did not listen within 60 s:\n${output}`)), 60_000);
    const look = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /Listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(output);
      if (match?.[1] !== undefined) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    };
    child.stdout.on('data', look);
    child.stderr.on('data', look);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`Doorkeeper exited (${code}) before listening:\n${output}`));
    });
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  return {
    baseUrl,
    clientId,
    clientSecret,
    tokens: async () => (await (await fetch(`${baseUrl}/_test/tokens`)).json()) as DoorkeeperToken[],
    env: (configDir, extra = {}) => ({
      MMAUTH_CONFIG_DIR: configDir,
      MMAUTH_BASE_URL: baseUrl,
      MMAUTH_CLIENT_ID: clientId,
      MMAUTH_CLIENT_SECRET: clientSecret,
      MMAUTH_CREDENTIAL_STORE: 'file',
      ...extra,
    }),
  };
}
