import { isSameSecret } from '../util/constant-time.js';

/**
 * The request target without the per-run secret segment (`/SECRET/rest` → `/rest`, `/SECRET?q` →
 * `/?q`), compared in constant time; undefined when it does not begin with it. `secret` undefined:
 * the target as it is.
 */
export function withoutSecret(target: string, secret: string | undefined): string | undefined {
  if (secret === undefined) return target;
  const given = target.slice(1, 1 + secret.length);
  const rest = target.slice(1 + secret.length);
  if (!target.startsWith('/') || !isSameSecret(given, secret)) return undefined;
  if (rest === '') return '/';
  if (rest.startsWith('?')) return `/${rest}`;
  return rest.startsWith('/') ? rest : undefined;
}
