import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { onTestFinished } from 'vitest';
import Provider from 'oidc-provider';

/** A request the provider received, for tests that check what mmauth sent. */
export interface ReceivedRequest {
  method: string;
  url: string;
  body: string;
}

/** The provider's public client (token_endpoint_auth_method `none`: PKCE and client_id alone). */
export const PUBLIC_CLIENT_ID = 'mmauth-interop-public';

/** A running oidc-provider with mmauth's routes, one confidential and one public client. */
export interface TestProvider {
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  provider: Provider;
  requests: ReceivedRequest[];
  /** RFC 7662 introspection of `token` with the client's credentials: whether it is active. */
  isActive(token: string): Promise<boolean>;
}

/**
 * Starts panva's oidc-provider (OpenID Certified) in-process on 127.0.0.1 port 0, with routes
 * `/oauth2/authorize`, `/oauth2/token`, `/oauth2/revoke`, `/oauth2/introspect`, a native
 * confidential client (client_secret_post; redirect URI http://127.0.0.1/callback, any port per
 * RFC 8252 §7.3), PKCE required, the device authorization grant (RFC 8628: /device/auth, the user code
 * page at /device), and its development login/consent pages. Closed when the test ends.
 */
export async function startTestProvider(): Promise<TestProvider> {
  const requests: ReceivedRequest[] = [];
  let handler: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    // Tee the body: record it, then replay it to the provider.
    const originalPush = req.push.bind(req);
    req.push = (chunk: unknown, encoding?: BufferEncoding) => {
      if (Buffer.isBuffer(chunk)) chunks.push(chunk);
      return originalPush(chunk, encoding);
    };
    req.once('end', () => {
      requests.push({ method: req.method ?? 'GET', url: req.url ?? '/', body: Buffer.concat(chunks).toString('utf8') });
    });
    handler?.(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as AddressInfo).port;
  const baseUrl = `http://127.0.0.1:${port}`;
  const clientId = 'mmauth-interop';
  const clientSecret = 'interop-secret-0123456789abcdefghijklmnopqrstuvwxyz';
  // The quick-start parts (in-memory adapter, development keys, devInteractions, default TTL and
  // policy functions) are this fixture's choice, not a finding: their warnings and notices are
  // dropped so that a green `npm test` prints none. Any other line of the provider still shows.
  const QUICK_START = /oidc-provider (WARNING: a quick start development-only|NOTICE: default )/;
  const { warn, info } = console;
  console.warn = (...args: unknown[]) => void (QUICK_START.test(String(args[0])) || warn(...args));
  console.info = (...args: unknown[]) => void (QUICK_START.test(String(args[0])) || info(...args));
  onTestFinished(() => {
    console.warn = warn;
    console.info = info;
  });
  const provider = new Provider(baseUrl, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        application_type: 'native',
        redirect_uris: ['http://127.0.0.1/callback'],
        grant_types: [
          'authorization_code',
          'client_credentials',
          'refresh_token',
          'urn:ietf:params:oauth:grant-type:device_code',
        ],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_post',
        scope: 'openid service userinfo.email',
      },
      {
        client_id: PUBLIC_CLIENT_ID,
        application_type: 'native',
        redirect_uris: ['http://127.0.0.1/callback'],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
        scope: 'openid service userinfo.email',
      },
    ],
    routes: {
      authorization: '/oauth2/authorize',
      token: '/oauth2/token',
      revocation: '/oauth2/revoke',
      introspection: '/oauth2/introspect',
    },
    scopes: ['openid', 'service', 'userinfo.email'],
    pkce: { required: () => true },
    // A refresh token with every code-flow token, rotated at once on use (the second use is refused).
    issueRefreshToken: async () => true,
    rotateRefreshToken: () => true,
    features: {
      clientCredentials: { enabled: true },
      revocation: { enabled: true },
      introspection: { enabled: true },
      devInteractions: { enabled: true },
      // RFC 8628: the device authorization endpoint in the metadata, the user code page at /device.
      deviceFlow: { enabled: true },
    },
    cookies: { keys: ['mmauth-test-cookie-key'] },
    findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub }) }),
  });
  handler = provider.callback();
  onTestFinished(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  return {
    baseUrl,
    clientId,
    clientSecret,
    provider,
    requests,
    async isActive(token) {
      const response = await fetch(`${baseUrl}/oauth2/introspect`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token, client_id: clientId, client_secret: clientSecret }),
      });
      const json: unknown = await response.json();
      return typeof json === 'object' && json !== null && 'active' in json && json.active === true;
    },
  };
}
