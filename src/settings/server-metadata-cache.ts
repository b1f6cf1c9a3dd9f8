import type { AppContext } from '../context.js';
import { resolveEndpoints } from '../oauth/endpoints.js';
import { endpointOffOrigin, fetchServerMetadata, withMetadata } from '../oauth/server-metadata.js';
import type { CachedServerMetadata } from '../store/profile.js';
import type { Target } from './target.js';

/** How long a profile's copy of the server's metadata is used before a login reads it again: a day. */
export const METADATA_MAX_AGE_MS = 24 * 3600 * 1000;

/**
 * `target` with the server's authorization server metadata (RFC 8414) applied to its endpoints, for
 * a login: the profile's copy when it is of this base URL and younger than METADATA_MAX_AGE_MS,
 * else read now (fetchServerMetadata: 404 means none, and nothing changes). A server that cannot
 * be read keeps the profile's copy (a failure never lowers RFC 9207's `iss` requirement), with one
 * warning. A server that still offers the implicit flow gets RFC 9700 §2.1.2's warning, once per
 * reading. A copy that promised `iss` is kept when a new reading drops the promise (a warning). A
 * copy naming an endpoint off the origin is read again. Returns the target and the metadata to store.
 */
export async function withServerMetadata(
  target: Target,
  ctx: AppContext,
): Promise<Target & { serverMetadata: CachedServerMetadata | undefined }> {
  const base = resolveEndpoints(target.endpoints.baseUrl);
  const held = target.profile?.serverMetadata;
  // A copy naming an endpoint off the origin (planted in the file: attacks M8) is read again, never used.
  const heldHere =
    held?.baseUrl === base.baseUrl &&
    (held.metadata === null || endpointOffOrigin(held.metadata, new URL(base.baseUrl).origin) === undefined)
      ? held
      : undefined;
  const isYoung = heldHere !== undefined && ctx.nowMs() - Date.parse(heldHere.fetchedAt) < METADATA_MAX_AGE_MS;
  let cached = heldHere;
  if (!isYoung) {
    try {
      const metadata = await fetchServerMetadata({ ...target.server, endpoints: base });
      cached = { fetchedAt: new Date(ctx.nowMs()).toISOString(), baseUrl: base.baseUrl, metadata };
      // A server that promised `iss` keeps the requirement for the profile's life (attacks M7): a
      // metadata 404 or a document without the promise is what a mix-up attacker would serve.
      if (heldHere?.metadata?.isIssRequired === true && metadata?.isIssRequired !== true) {
        cached = heldHere;
        (await ctx.output()).warn(
          `${base.baseUrl} no longer promises iss in its metadata (RFC 9207); this profile still requires it, as the server promised before. To accept the change, remove the profile and log in again`,
        );
      }
      if (metadata?.responseTypes?.includes('token') === true) {
        (await ctx.output()).warn(
          `${base.baseUrl} still offers the implicit flow (response_type=token), which RFC 9700 §2.1.2 says not to use; mmauth uses it only with --implicit`,
        );
      }
    } catch (error) {
      (await ctx.output()).warn(
        `could not read the server's metadata (${error instanceof Error ? error.message : String(error)}); ${heldHere?.metadata ? 'using the copy from the last login' : 'using the endpoints under the base URL'}`,
      );
    }
  }
  const endpoints = withMetadata(base, cached?.metadata);
  return { ...target, endpoints, server: { ...target.server, endpoints }, serverMetadata: cached };
}
