/**
 * What a caller asks of the core: the shapes the command line's parsed flags and the library's
 * options both fill (the command line adds its flags on top; src/commands/options.ts defines them).
 */

/** Options every command that talks to the server has. */
export interface CommonOptions {
  baseUrl?: string;
  profile?: string;
  /** Seconds. */
  timeout: number;
  json?: boolean;
  verbose?: boolean;
}

/** Options of a command that reads only the local store. */
export interface LocalOptions {
  profile?: string;
  json?: boolean;
  verbose?: boolean;
}

/** Options of `token` and `header`: local options plus --min-ttl. */
export interface TokenOptions extends LocalOptions {
  /** Seconds the token must still be valid for; 0 accepts any unexpired token. */
  minTtl: number;
}

/** Options that can carry the client secret (never as an argv value). */
export interface SecretOptions {
  clientSecretFile?: string;
  clientSecretStdin?: boolean;
}

/** Options of a command that authenticates as the client: common + client id + secret sources. */
export interface ClientOptions extends CommonOptions, SecretOptions {
  clientId?: string;
}
