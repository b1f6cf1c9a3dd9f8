import { join } from 'node:path';
import type { AppContext } from '../context.js';
import { createTokenFile } from '../exec/token-file.js';
import type { Output } from '../ui/output.js';
import { keepProfileToken } from './profile-token.js';
import type { UsableTokenOptions } from './usable-token.js';

/** What a child of `exec` is given of the token, and how it is taken back. */
export interface ChildTokenSupply {
  /** The child's variables: the token (under `tokenEnv`), MMAUTH_TOKEN_FILE, and with `serve` MMAUTH_TOKEN_URL, MMAUTH_TOKEN_URL_AUTHORIZATION and MMAUTH_TOKEN_SOCKET. */
  variables: Record<string, string>;
  /** The private 0700 directory of the token file (and the endpoint's socket). */
  dir: string;
  /** The base URL of the server the token belongs to (its origin is where the token may go). */
  baseUrl: string | undefined;
  /** Waits for a renewal in flight (so the pair it brings is stored), closes the endpoint, removes the directory. */
  stop(): Promise<void>;
}

/**
 * The token for `exec`'s child, kept current while it runs: got exactly as `token` gets it and kept
 * fresh (keepProfileToken), written to a 0600 file in a fresh 0700 directory that follows each
 * renewal, and with `serve` offered by a token endpoint on 127.0.0.1 and a Unix socket in that
 * directory (startTokenServer: a bearer secret of its own, other users' connections closed).
 * Throws what usableAccessToken throws.
 */
export async function supplyChildToken(
  options: UsableTokenOptions & { tokenEnv: string; serve?: boolean | undefined },
  ctx: AppContext,
  out: Output,
): Promise<ChildTokenSupply> {
  // The file is made once the first token is known (the keeper's, should it have renewed already).
  let fileRef: ReturnType<typeof createTokenFile> | undefined;
  const { keeper, baseUrl } = await keepProfileToken(options, ctx, out, (token) => fileRef?.write(token));
  const file = createTokenFile(ctx.env, keeper.accessToken);
  fileRef = file;
  let server:
    { url: string; authorization: string; socketPath: string | undefined; close(): Promise<void> } | undefined;
  const stop = async () => {
    await keeper.stop();
    await server?.close();
    file.remove();
  };
  try {
    if (options.serve === true) {
      const { startTokenServer } = await import('../loopback/token-server.js');
      server = await startTokenServer(
        () => keeper.fresh(),
        join(file.dir, 'token.sock'),
        (refused) => keeper.refused(refused),
      );
    }
  } catch (error) {
    await stop();
    throw error;
  }
  const endpoint =
    server === undefined
      ? {}
      : {
          MMAUTH_TOKEN_URL: server.url,
          MMAUTH_TOKEN_URL_AUTHORIZATION: server.authorization,
          ...(server.socketPath === undefined ? {} : { MMAUTH_TOKEN_SOCKET: server.socketPath }),
        };
  return {
    variables: { [options.tokenEnv]: keeper.accessToken, MMAUTH_TOKEN_FILE: file.path, ...endpoint },
    dir: file.dir,
    baseUrl,
    stop,
  };
}
