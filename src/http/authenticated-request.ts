/**
 * The one path of an authenticated request, shared by `mmauth api`, the
 * library's `source.fetch` and the proxy: the token goes to the profile's origin only, and a
 * refusal renews once and replays once when the request can be sent again.
 */

/** Where an authenticated request gets its token: the current one, and a new one after the service refused `accessToken`. */
export interface RequestTokens {
  current(): Promise<string>;
  /** The current token when it is no longer `accessToken`, else a renewal (one across processes). */
  renewAfterRefusal(accessToken: string): Promise<string>;
}

/** How a caller's answers are judged and let go. */
export interface RefusalRule<Answer> {
  /** Whether `answer` refuses the token itself (a 401; `api` asks for `invalid_token` too: RFC 6750 §3.1). */
  isRefused(answer: Answer): boolean;
  /** Whether the request can be sent twice: no body, or a buffered one (a stream cannot). */
  canReplay: boolean;
  /** Drops a refused answer's body so that its connection is free again. */
  discard(answer: Answer): void | Promise<void>;
}

/** What sendWithToken gives back: the answer the program sees, and whether it took a renewal. */
export interface AuthenticatedAnswer<Answer> {
  answer: Answer;
  isRenewed: boolean;
}

/**
 * Sends a request with the current token (`send(accessToken)`, RFC 6750 §2.1); when the service
 * refuses it and the request can be replayed, asks `tokens` once for a new one and sends once more
 * (the project's rules: a 401 on a token mmauth just handed over renews, whatever its lifetime). The second
 * answer is final, refused or not. When `tokens` gives back the refused token itself, the refusal is
 * the answer and nothing is sent again. Throws what `send` and `tokens` throw (the refusal discarded).
 */
export async function sendWithToken<Answer>(
  send: (accessToken: string) => Promise<Answer>,
  tokens: RequestTokens,
  rule: RefusalRule<Answer>,
): Promise<AuthenticatedAnswer<Answer>> {
  const accessToken = await tokens.current();
  const answer = await send(accessToken);
  if (!rule.canReplay || !rule.isRefused(answer)) return { answer, isRenewed: false };
  let next: string;
  try {
    next = await tokens.renewAfterRefusal(accessToken);
  } catch (error) {
    await rule.discard(answer);
    throw error;
  }
  // No other token (the refusal was not about it: refusalGuard): the refusal is the answer, sent once.
  if (next === accessToken) return { answer, isRenewed: false };
  await rule.discard(answer);
  return { answer: await send(next), isRenewed: true };
}

/**
 * Whether a request to `url` may carry the profile's token: only on the origin (scheme, host, port)
 * of the profile's base URL (RFC 6749 §10.3; the project's rules). False without a base URL.
 */
export function mayCarryToken(url: URL, baseUrl: string | undefined): boolean {
  return baseUrl !== undefined && url.origin === new URL(baseUrl).origin;
}
