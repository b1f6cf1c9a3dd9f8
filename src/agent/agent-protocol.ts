/**
 * The agent's protocol (`mmauth agent`): plain HTTP/1.1 over a Unix socket, versioned in the path,
 * JSON answers with `schema_version` (schemas/agent-token.schema.json, agent-status.schema.json,
 * error.schema.json). docs/agent.md is its reference. No imports: clients and the server share it.
 */

/** The protocol's version, in every path (`/v1/…`) and as every answer's `schema_version`. */
export const AGENT_PROTOCOL_VERSION = 1;

/**
 * `GET /v1/token?profile=NAME&min_ttl=S[&verify=1]`: a usable access token of a served profile;
 * with `verify=1` one token info accepts now (renewed when it refuses), answered with `"verified": true`.
 */
export const TOKEN_PATH = '/v1/token';
/** `POST /v1/token/refused` `{"profile", "access_token"}`: the service refused that token (a 401); a renewed one. */
export const REFUSED_PATH = '/v1/token/refused';
/** `GET /v1/status`: the agent's pid and the profiles it serves. */
export const STATUS_PATH = '/v1/status';
/** `POST /v1/stop`: the agent answers `{"schema_version", "pid", "stopping": true}`, then stops. */
export const STOP_PATH = '/v1/stop';

/** A token answer: an access token only, never a refresh token or a client secret. */
export interface AgentToken {
  accessToken: string;
  tokenType: string;
  /** ISO 8601, or undefined for a token that never expires. */
  expiresAt: string | undefined;
  /** Space-separated, or undefined when the server said none. */
  scope: string | undefined;
  profile: string;
  baseUrl: string | undefined;
  /** How the profile's token was obtained (`authorization_code`, `client_credentials`, `implicit`, `personal`). */
  grant?: string | undefined;
  /** True when the agent asked token info about this token for this answer (`verify=1`) and it was accepted. */
  verified?: boolean | undefined;
}

/** What `GET /v1/status` says. */
export interface AgentStatus {
  pid: number;
  /** The profile a request without `profile` gets. */
  defaultProfile: string;
  profiles: Array<{ name: string; baseUrl: string | undefined }>;
}

/** An ISO 8601 instant in whole seconds (`…T09:30:00Z`), as every document of the command line gives it. */
function wholeSeconds(instant: string): string {
  const ms = Date.parse(instant);
  return Number.isNaN(ms)
    ? instant
    : new Date(ms - (((ms % 1000) + 1000) % 1000)).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** An AgentToken as the wire carries it (snake_case, `schema_version` first, `expires_at` in whole seconds). */
export function agentTokenJson(token: AgentToken): Record<string, unknown> {
  return {
    schema_version: AGENT_PROTOCOL_VERSION,
    access_token: token.accessToken,
    token_type: token.tokenType,
    expires_at: token.expiresAt === undefined ? null : wholeSeconds(token.expiresAt),
    scope: token.scope ?? null,
    profile: token.profile,
    base_url: token.baseUrl ?? null,
    grant: token.grant ?? null,
    // Only in an answer to `verify=1`: an agent that does not know it never says so.
    ...(token.verified === true ? { verified: true } : {}),
  };
}

const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

/** The token answer `json`, checked field by field; undefined when it is not one. */
export function parseAgentToken(json: unknown): AgentToken | undefined {
  if (typeof json !== 'object' || json === null) return undefined;
  const r = json as Record<string, unknown>;
  const accessToken = text(r.access_token);
  const profile = text(r.profile);
  if (r.schema_version !== AGENT_PROTOCOL_VERSION || accessToken === undefined || profile === undefined)
    return undefined;
  if (!/^[\x21-\x7e]+$/.test(accessToken)) return undefined;
  const expiresAt = text(r.expires_at);
  if (expiresAt !== undefined && Number.isNaN(Date.parse(expiresAt))) return undefined;
  return {
    accessToken,
    tokenType: text(r.token_type) ?? 'bearer',
    expiresAt,
    scope: text(r.scope),
    profile,
    baseUrl: text(r.base_url),
    grant: text(r.grant),
    verified: r.verified === true,
  };
}

/** The status answer `json`, checked; undefined when it is not one. */
export function parseAgentStatus(json: unknown): AgentStatus | undefined {
  if (typeof json !== 'object' || json === null) return undefined;
  const r = json as Record<string, unknown>;
  const defaultProfile = text(r.default_profile);
  if (typeof r.pid !== 'number' || defaultProfile === undefined || !Array.isArray(r.profiles)) return undefined;
  const profiles: AgentStatus['profiles'] = [];
  for (const entry of r.profiles as unknown[]) {
    const e = (typeof entry === 'object' && entry !== null ? entry : {}) as Record<string, unknown>;
    const name = text(e.name);
    if (name === undefined) return undefined;
    profiles.push({ name, baseUrl: text(e.base_url) });
  }
  return { pid: r.pid, defaultProfile, profiles };
}
