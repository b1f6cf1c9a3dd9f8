/** The flag that fixes what the authorization endpoint rejected (as servers of the family do). */
export function probeHint(oauthError: string | undefined): string {
  switch (oauthError) {
    case 'invalid_client':
      return 'check --client-id (MMAUTH_CLIENT_ID): the server knows no such client';
    case 'invalid_redirect_uri':
      return 'register the redirect URI http://127.0.0.1/callback with the client, or pass the registered one with --redirect-uri';
    case 'invalid_scope':
      return 'pass --scope with scopes the server knows (space-separated)';
    default:
      return 'check --client-id, --redirect-uri and --scope; --no-probe skips this check';
  }
}

/** The hint for an HTTP status that is neither success nor an OAuth error: a redirect, a 5xx, a 404, a proxy's 407. */
export function statusHint(status: number | undefined): string | undefined {
  if (status === undefined) return undefined;
  if (status >= 300 && status < 400) return "check --base-url: it must be the server's own address";
  if (status >= 500) return 'try again later';
  if (status === 407) return 'put the proxy credentials in HTTPS_PROXY / HTTP_PROXY (http://user:password@host:port)';
  return status === 404
    ? "check the base URL and its path (--base-url, MMAUTH_BASE_URL or the profile's): the endpoints are under {base}/oauth2/"
    : undefined;
}
