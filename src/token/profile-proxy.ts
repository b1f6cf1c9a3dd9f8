import { join } from 'node:path';
import type { AppContext } from '../context.js';
import { MmauthError } from '../errors.js';
import { createPrivateDir } from '../exec/token-file.js';
import { startApiProxy, type ApiProxyOptions } from '../loopback/api-proxy.js';
import { resolveEndpoints } from '../oauth/endpoints.js';
import type { Output } from '../ui/output.js';
import { keepProfileToken } from './profile-token.js';
import type { UsableTokenOptions } from './usable-token.js';

/** A running proxy for a profile: its address, its Unix socket, and close() (which waits for a renewal in flight). */
export interface RunningProxy {
  url: string;
  /** The proxy's Unix socket, in a private (0700) directory of its own, removed on close. */
  socketPath: string;
  /** The profile whose token it adds, and its server. */
  profileName: string;
  baseUrl: string;
  close(): Promise<void>;
}

/** What serveProfileApi takes: the token's options, the port, and what a program may reach. */
export interface ProfileApiOptions
  extends UsableTokenOptions, Pick<ApiProxyOptions, 'allowMethods' | 'allowPaths' | 'onRequest' | 'pathSecret'> {
  /** Port on 127.0.0.1; 0 for a free one. */
  port: number;
}

/**
 * Serves the profile's API with its token added: the token kept as exec keeps one
 * (keepProfileToken: renewed before it goes stale, and after the service refuses it), requests
 * forwarded to the profile's base URL only (startApiProxy) on 127.0.0.1:`port` and on a Unix socket
 * in a private 0700 directory of its own. Throws what usableAccessToken throws, `no_base_url`
 * when the profile has no base URL (a token given in MMAUTH_TOKEN), and what startApiProxy throws
 * (`port_in_use`), the token's keeper stopped and the directory removed first.
 */
export async function serveProfileApi(options: ProfileApiOptions, ctx: AppContext, out: Output): Promise<RunningProxy> {
  const { keeper, baseUrl, first } = await keepProfileToken(options, ctx, out, () => undefined);
  if (baseUrl === undefined) throw new MmauthError('no_base_url', 'the proxy needs the profile to have a base URL');
  const dir = createPrivateDir(ctx.env, 'mmauth-proxy-');
  const socketPath = join(dir.path, 'api.sock');
  const proxy = await startApiProxy({
    upstream: new URL(resolveEndpoints(baseUrl).baseUrl),
    port: options.port,
    socketPath,
    tokens: {
      current: async () => (await keeper.fresh()).accessToken,
      renewAfterRefusal: async (refused) => (await keeper.refused(refused)).accessToken,
    },
    allowMethods: options.allowMethods,
    allowPaths: options.allowPaths,
    onRequest: options.onRequest,
    pathSecret: options.pathSecret,
  }).catch(async (error: unknown) => {
    // A port another program holds (`port_in_use`): nothing keeps running, nothing is left behind.
    await keeper.stop();
    dir.remove();
    throw error;
  });
  return {
    url: proxy.url,
    socketPath,
    profileName: first.profileName,
    baseUrl,
    close: async () => {
      await proxy.close();
      await keeper.stop();
      dir.remove();
    },
  };
}
