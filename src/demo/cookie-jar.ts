/** Cookies by host name (as browsers keep them: not by port), each with its path (RFC 6265 §5.3, simplified). */
export class CookieJar {
  readonly #byHost = new Map<string, Map<string, { value: string; path: string }>>();

  /** Keeps the cookies `response` sets for `url`. */
  take(url: URL, response: Response): void {
    for (const header of response.headers.getSetCookie()) {
      const [pair = '', ...attributes] = header.split(';');
      const eq = pair.indexOf('=');
      if (eq <= 0) continue;
      const pathAttribute = attributes.map((a) => a.trim()).find((a) => /^path=/i.test(a));
      const path = pathAttribute === undefined ? '/' : pathAttribute.slice(5) || '/';
      const cookies = this.#byHost.get(url.hostname) ?? new Map<string, { value: string; path: string }>();
      cookies.set(pair.slice(0, eq).trim(), { value: pair.slice(eq + 1).trim(), path });
      this.#byHost.set(url.hostname, cookies);
    }
  }

  /** The Cookie header for a request to `url`, or undefined. */
  headerFor(url: URL): string | undefined {
    const cookies = [...(this.#byHost.get(url.hostname) ?? new Map<string, { value: string; path: string }>())]
      .filter(([, cookie]) => url.pathname === cookie.path || url.pathname.startsWith(cookie.path.replace(/\/?$/, '/')))
      .map(([name, cookie]) => `${name}=${cookie.value}`);
    return cookies.length === 0 ? undefined : cookies.join('; ');
  }
}
