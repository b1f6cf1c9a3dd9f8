import { listenOnLoopback } from '../util/listen.js';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequestHandler, type EmulatorFlavor, type ObservedRequest } from './routes.js';
import { EmulatorState, randomToken, type EmulatorClient } from './state.js';
import { readStateFile, restoreState, stateFileText, writeStateFile } from './state-file.js';

/** Options of startEmulator; every field is optional. */
export interface EmulatorOptions {
  /** TCP port on 127.0.0.1; 0 (default) picks a free one. */
  port?: number;
  /** Access token lifetime in seconds (default 7200, Doorkeeper's); 0: tokens never expire. */
  tokenTtlS?: number;
  /** Approve every valid authorization request without sign-in or consent pages. */
  autoApprove?: boolean;
  /** Whether the code flow also gets a refresh token (default true; Doorkeeper's `use_refresh_token`). */
  refreshTokens?: boolean;
  /**
   * `spec` (default): the spec's token info fields, revoke always 200. `doorkeeper5`: Doorkeeper 5's.
   * `doorkeeper6`: Doorkeeper 5's answers plus RFC 8414 metadata and RFC 9207 `iss` (docs/emulator.md).
   */
  flavor?: EmulatorFlavor;
  /** The `doorkeeper6` issuer (Doorkeeper's `issuer` setting); default the emulator's base URL. */
  issuer?: string;
  /** Seconds between device-code polls (RFC 8628 `interval`; default 5); a sooner poll is `slow_down`. */
  deviceIntervalS?: number;
  /** Seconds a device code lives (RFC 8628 `expires_in`; default 600). */
  deviceLifetimeS?: number;
  /** The demo client's id (default `mmauth-demo`). */
  clientId?: string;
  /** The demo client's secret (default: random). */
  clientSecret?: string;
  /** The path of the clients' registered redirect URI (`http://127.0.0.1/callback` by default; any loopback port matches). */
  redirectPath?: string;
  /** The demo user's password (default `demo`). */
  userPassword?: string;
  /**
   * A state file (JSON, 0600): the demo client's secret and every token issued are read from it at
   * start and written to it after each request that changed them, so that profiles signed in at
   * this emulator keep working after a restart. Created when missing. `clientSecret` still wins.
   */
  stateFile?: string;
  /** Clock in epoch ms (default Date.now), for tests of expiry. */
  nowMs?: () => number;
  /** Called with every request received, for tests that check what a client sent. */
  onRequest?: (request: ObservedRequest) => void;
}

/** A running emulator. */
export interface Emulator {
  /** `http://127.0.0.1:PORT`; the endpoints are under `/oauth2/`. */
  baseUrl: string;
  port: number;
  /** The seeded confidential client; its redirect URI accepts any port (RFC 8252 §7.3). */
  client: { uid: number; clientId: string; clientSecret: string; redirectUri: string };
  /** The seeded public client (no secret: PKCE and `client_id` alone; RFC 8252 §8.4), same redirect URI. */
  publicClient: { uid: number; clientId: string; redirectUri: string };
  /** The seeded resource owner for the sign-in page. */
  user: { id: number; login: string; password: string };
  /** A personal access token of the seeded user; scopes `service userinfo.email`; no expiry. */
  personalAccessToken: string;
  /** The in-memory state, for tests (sizes, clock). */
  state: EmulatorState;
  /** Stops listening and drops open connections. */
  close(): Promise<void>;
}

/**
 * Starts an emulator of the service's OAuth interface (spec §4) on 127.0.0.1, seeded with a
 * confidential and a public client (redirect URI `http://127.0.0.1/callback`), a user and a
 * personal access token. Rejects with MmauthError `port_in_use` when the port is taken.
 */
export async function startEmulator(options: EmulatorOptions = {}): Promise<Emulator> {
  const state = new EmulatorState({
    tokenTtlS: options.tokenTtlS ?? 7200,
    nowMs: options.nowMs ?? Date.now,
    hasRefreshTokens: options.refreshTokens ?? true,
    ...(options.deviceIntervalS === undefined ? {} : { deviceIntervalS: options.deviceIntervalS }),
    ...(options.deviceLifetimeS === undefined ? {} : { deviceLifetimeS: options.deviceLifetimeS }),
  });
  const redirectUri = `http://127.0.0.1${options.redirectPath ?? '/callback'}`;
  const saved = options.stateFile === undefined ? undefined : readStateFile(options.stateFile);
  const demoClient: EmulatorClient & { clientSecret: string } = {
    uid: 1,
    clientId: options.clientId ?? 'mmauth-demo',
    clientSecret: options.clientSecret ?? saved?.client_secret ?? randomToken(),
    name: 'mmauth demo client',
    redirectUris: [redirectUri],
  };
  const personalTokens: EmulatorClient = {
    uid: 2,
    clientId: 'personal-access-tokens',
    clientSecret: undefined,
    name: 'Personal access tokens',
    redirectUris: [],
  };
  const publicClient: EmulatorClient = {
    uid: 3,
    clientId: 'mmauth-public',
    clientSecret: undefined,
    name: 'mmauth public client',
    redirectUris: [redirectUri],
  };
  state.clients.set(demoClient.clientId, demoClient);
  state.clients.set(publicClient.clientId, publicClient);
  state.clients.set(personalTokens.clientId, personalTokens);
  const user = { id: 42, login: 'demo', password: options.userPassword ?? 'demo' };
  state.users.set(user.id, user);
  if (saved !== undefined) restoreState(state, saved);
  // The seeded personal access token: the one a state file kept while it lives, else a new one.
  const pat =
    state
      .tokenRecords()
      .find(
        (record) => record.grant === 'personal' && record.ownerId === user.id && state.findActiveToken(record.token),
      ) ??
    state.issueToken(
      { client: personalTokens, ownerId: user.id, scopes: ['service', 'userinfo.email'], grant: 'personal' },
      0,
    );
  const persist = persistence(options.stateFile, state, demoClient.clientSecret);
  persist.now();

  let allowedHosts: ReadonlySet<string> = new Set();
  let listeningPort = 0;
  const handler = createRequestHandler({
    state,
    autoApprove: options.autoApprove === true,
    flavor: options.flavor ?? 'spec',
    issuer: (): string | undefined =>
      options.flavor === 'doorkeeper6' ? (options.issuer ?? `http://127.0.0.1:${listeningPort}`) : undefined,
    onRequest: options.onRequest,
    allowedHosts: () => allowedHosts,
  });
  const server = createServer((request, response) => {
    response.once('finish', persist.soon);
    handler(request, response);
  });
  server.keepAliveTimeout = 5_000;
  await listenOnLoopback(server, options.port ?? 0);
  const port = (server.address() as AddressInfo).port;
  listeningPort = port;
  allowedHosts = new Set([`127.0.0.1:${port}`, `localhost:${port}`]);
  let closing: Promise<void> | undefined;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    port,
    client: { uid: demoClient.uid, clientId: demoClient.clientId, clientSecret: demoClient.clientSecret, redirectUri },
    publicClient: { uid: publicClient.uid, clientId: publicClient.clientId, redirectUri },
    user,
    personalAccessToken: pat.token,
    state,
    close: () =>
      (closing ??= new Promise<void>((resolve) => {
        persist.now();
        server.close(() => resolve());
        server.closeAllConnections();
      })),
  };
}

/**
 * Writes the state file after requests (`soon`: at most once per turn of the event loop, and only
 * when its text changed) and at start and close (`now`); does nothing without a file.
 */
function persistence(path: string | undefined, state: EmulatorState, clientSecret: string) {
  let written = '';
  let isPending = false;
  const now = () => {
    isPending = false;
    if (path === undefined) return;
    const text = stateFileText(state, clientSecret);
    if (text === written) return;
    writeStateFile(path, text);
    written = text;
  };
  return {
    now,
    soon: () => {
      if (path === undefined || isPending) return;
      isPending = true;
      setImmediate(() => {
        try {
          now();
        } catch (error) {
          process.emitWarning(`cannot write the emulator state file ${path}: ${String(error)}`);
        }
      });
    },
  };
}
