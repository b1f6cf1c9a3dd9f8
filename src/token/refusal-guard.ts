/**
 * How long after a renewal that a refusal brought a further refusal is first checked at token
 * info, in ms: a 401 that keeps coming back on new tokens is not about them (attacks P4).
 */
export const REFUSAL_RECHECK_MS = 60_000;

/** Whether a refusal (401) of a token should renew it: see refusalGuard. */
export interface RefusalGuard {
  /**
   * True when a refusal of `accessToken` should renew it: always the first time, and after a
   * renewal within REFUSAL_RECHECK_MS only when token info no longer accepts it (one question at a
   * time per token, shared by the refusals that arrive while it is out). A failed question renews nothing.
   */
  shouldRenew(accessToken: string): Promise<boolean>;
  /** Records that a refusal renewed the token now. */
  renewed(): void;
}

/**
 * The guard against renewal storms (attacks P4) of the proxy: a program behind it that keeps drawing
 * 401s the token is not the cause of (bad client credentials at the token endpoint, a resource that
 * always answers 401) would otherwise cost a renewal per request, each a refresh grant, two synced
 * writes and, on a rotating server, the end of the previous access token.
 * `isActive` asks token info (spec §4.3) whether the service still accepts a token.
 */
export function refusalGuard(isActive: (accessToken: string) => Promise<boolean>, nowMs: () => number): RefusalGuard {
  let renewedAtMs: number | undefined;
  let check: { accessToken: string; isActive: Promise<boolean> } | undefined;
  return {
    async shouldRenew(accessToken) {
      if (renewedAtMs === undefined || nowMs() - renewedAtMs >= REFUSAL_RECHECK_MS) return true;
      // Refusals that arrive while the question is out share it; a later one asks again (the token may have ended since).
      if (check?.accessToken !== accessToken) {
        const asked = { accessToken, isActive: isActive(accessToken).catch(() => true) };
        check = asked;
        void asked.isActive.finally(() => {
          if (check === asked) check = undefined;
        });
      }
      return !(await check.isActive);
    },
    renewed() {
      renewedAtMs = nowMs();
    },
  };
}
