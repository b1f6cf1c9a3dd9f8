import type { TokenResponse } from './parse.js';
import type { OAuthPeer } from './peer.js';
import { judgeTokenAnswer } from './token-response.js';

/**
 * Requests a token with `grant_type=client_credentials` at `POST {base}/oauth2/token` (spec §4.2
 * behaviour 2; RFC 6749 §4.4.2), client_id/client_secret in the body (spec §5.3) and `scope`
 * (space-separated), and judges the answer with judgeTokenAnswer. Throws AuthError for
 * invalid_client (exit 4), UsageError for invalid_scope (2), NetworkError (3), ServerError (1).
 *
 * Not through oauth4webapi, unlike the code flow: its request and process functions work on
 * Fetch API objects (Headers, Response), and the first of those loads Node 20's internal fetch
 * with http2, tls and zlib, about 20 ms of a 40 ms command that CI jobs run once per job (issue 6).
 */
export async function requestClientCredentialsToken(peer: OAuthPeer, clientId: string, clientSecret: string, scope: string): Promise<TokenResponse> {
  const answer = await peer.fetch(peer.endpoints.token.href, {
    method: 'POST',
    headers: { accept: 'application/json' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret, scope }),
    redirect: 'manual',
  });
  return judgeTokenAnswer(answer);
}
