/**
 * Whether `given` matches the registered redirect URI: scheme, host, path and query equal; the
 * port must match too except for the loopback IP literals 127.0.0.1 and [::1] (RFC 8252 §7.3;
 * server-behaviour.md authorize 5). `localhost` is matched exactly, port included.
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
  const isIpLoopback = a.hostname === '127.0.0.1' || a.hostname === '[::1]';
  return (
    a.protocol === b.protocol &&
    a.hostname === b.hostname &&
    a.pathname === b.pathname &&
    a.search === b.search &&
    b.hash === '' &&
    (isIpLoopback || a.port === b.port)
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
