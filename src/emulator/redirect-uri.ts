/** Whether a host is a loopback IP literal (127.0.0.0/8 or ::1), as Ruby's `IPAddr#loopback?` judges it. */
function isLoopbackIp(hostname: string): boolean {
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname) || hostname === '[::1]';
}

/** A query's `&`-separated parts, sorted: Doorkeeper compares registered queries regardless of order. */
function queryParts(search: string): string[] {
  return search.replace(/^\?/, '').split('&').filter(Boolean).sort();
}

/**
 * Whether `given` matches the registered redirect URI as Doorkeeper 5.5's `URIChecker.matches?`
 * judges it: scheme, host and path equal; a registered query must be present in `given` with the
 * same parts in any order, and a query `given` adds to a registered URI without one is ignored; the
 * port must match too except for loopback IP literals (RFC 8252 §7.3; what servers of the family do authorize
 * 5). `localhost` is matched exactly, port included. A fragment never matches.
 */
export function redirectUriMatches(registered: string, given: string): boolean {
  let a: URL;
  let b: URL;
  try {
    a = new URL(registered);
    b = new URL(given);
  } catch {
    return false;
  }
  if (a.search !== '' && queryParts(a.search).join('&') !== queryParts(b.search).join('&')) return false;
  const isLoopback = isLoopbackIp(a.hostname) && isLoopbackIp(b.hostname);
  return (
    a.protocol === b.protocol &&
    a.hostname === b.hostname &&
    a.pathname === b.pathname &&
    b.hash === '' &&
    (isLoopback || a.port === b.port)
  );
}

/** `redirectUri` with `params` appended to its query (code flow) or put in the fragment (implicit; RFC 6749 §4.2.2). */
export function redirectTo(
  redirectUri: string,
  params: Record<string, string | undefined>,
  isFragment: boolean,
): string {
  const url = new URL(redirectUri);
  const extra = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined) extra.set(key, value);
  }
  if (isFragment) {
    url.hash = extra.toString();
  } else {
    for (const [key, value] of extra) url.searchParams.append(key, value);
  }
  return url.href;
}
