import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';
import { startEmulator, type Emulator, type EmulatorOptions, type ObservedRequest } from '../../src/emulator/index.js';

/** A started emulator, closed when the test ends, with the requests it received. */
export interface TestEmulator extends Emulator {
  requests: ObservedRequest[];
  /** Moves the emulator's clock forward. */
  advanceSeconds(seconds: number): void;
  /** Environment for a spawned mmauth pointing at this emulator, with the config dir. */
  env(configDir: string, extra?: Record<string, string | undefined>): Record<string, string | undefined>;
}

/** Starts an emulator on 127.0.0.1 port 0 with a controllable clock, closed when the test ends. */
export async function startTestEmulator(options: EmulatorOptions = {}): Promise<TestEmulator> {
  const requests: ObservedRequest[] = [];
  let offsetMs = 0;
  const emulator = await startEmulator({
    nowMs: () => Date.now() + offsetMs,
    ...options,
    onRequest: (request) => requests.push(request),
  });
  onTestFinished(() => emulator.close());
  return Object.assign(emulator, {
    requests,
    advanceSeconds: (seconds: number) => {
      offsetMs += seconds * 1000;
    },
    env: (configDir: string, extra: Record<string, string | undefined> = {}) => ({
      MMAUTH_CONFIG_DIR: configDir,
      MMAUTH_BASE_URL: emulator.baseUrl,
      MMAUTH_CLIENT_ID: emulator.client.clientId,
      MMAUTH_CLIENT_SECRET: emulator.client.clientSecret,
      ...extra,
    }),
  });
}

/** A refresh grant (RFC 6749 §6) with `refreshToken`, sent straight to the emulator as its demo client. */
export function refreshWith(
  emulator: Pick<TestEmulator, 'baseUrl' | 'client'>,
  refreshToken: string,
): Promise<Response> {
  return fetch(`${emulator.baseUrl}/oauth2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'refresh_token',
      refresh_token: refreshToken,
      client_id: emulator.client.clientId,
      client_secret: emulator.client.clientSecret,
    }),
  });
}

/** How many refresh grants (RFC 6749 §6) the emulator has answered so far. */
export function refreshGrants(emulator: Pick<TestEmulator, 'requests'>): number {
  return emulator.requests.filter((r) => new URLSearchParams(r.body).get('grant_type') === 'refresh_token').length;
}

/** The config file as JSON (throws when it does not exist). */
export function readConfig(configDir: string): unknown {
  return JSON.parse(readFileSync(join(configDir, 'config.json'), 'utf8'));
}

/** The access token stored in a profile of the config file (throws when there is none). */
export function storedAccessToken(configDir: string, profile = 'default'): string {
  const config = readConfig(configDir) as { profiles: Record<string, { token?: { access_token?: string } }> };
  const token = config.profiles[profile]?.token?.access_token;
  if (token === undefined) {
    throw new Error(`profile "${profile}" has no stored token`);
  }
  return token;
}

/** The raw config file, or undefined when there is none. */
export function readConfigText(configDir: string): string | undefined {
  try {
    return readFileSync(join(configDir, 'config.json'), 'utf8');
  } catch {
    return undefined;
  }
}
