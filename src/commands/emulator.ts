import { Option, type Command } from '@commander-js/extra-typings';
import type { AppContext } from '../context.js';
import { MmauthError } from '../errors.js';
import { SCHEMA_VERSION } from '../ui/json-document.js';
import { parseSeconds } from './options.js';
import { whenAborted } from '../util/when-aborted.js';

/** Options of `mmauth emulator`. */
export interface EmulatorCommandOptions {
  port: number;
  /** Seconds; 0 for no expiry. */
  tokenTtl: number;
  autoApprove?: boolean;
  json?: boolean;
  flavor: 'spec' | 'doorkeeper5' | 'doorkeeper6';
  /** false with --no-refresh-tokens. */
  refreshTokens: boolean;
  /** --state FILE: the secret and issued tokens kept across restarts. */
  state?: string;
  /** --client-secret-file PATH: the demo client's secret, fixed. */
  clientSecretFile?: string;
  /** --device-interval and --device-lifetime: the device grant's poll interval and code lifetime, seconds. */
  deviceInterval: number;
  deviceLifetime: number;
}

function parsePort(value: string): number {
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65_535) {
    throw new MmauthError('usage', `--port expects 0 to 65535, got "${value}"`);
  }
  return port;
}

/** The first line of the secret file `path`; `unreadable_secret_file` or `invalid_client_secret` (empty). */
async function readSecretFile(path: string, ctx: AppContext): Promise<string> {
  let text: string;
  try {
    text = await ctx.readTextFile(path);
  } catch (error) {
    throw new MmauthError('unreadable_secret_file', `cannot read the client secret file ${path}`, { cause: error });
  }
  const secret = text.replace(/[\r\n]+$/, '');
  if (secret === '' || /[\r\n]/.test(secret)) {
    throw new MmauthError('invalid_client_secret', `${path} must hold the client secret on one line`);
  }
  return secret;
}

/** Registers `mmauth emulator`; the logic is runEmulator. */
export function registerEmulator(program: Command, ctx: AppContext): void {
  program
    .command('emulator')
    .description("serve a local emulator of the service's OAuth interface on 127.0.0.1 until Ctrl-C")
    .option('--port <port>', 'port on 127.0.0.1 (0 picks a free one)', parsePort, 4010)
    .option('--token-ttl <seconds>', 'access token lifetime; 0 for tokens that never expire', parseSeconds(0), 7200)
    .option('--no-refresh-tokens', 'issue no refresh tokens (on by default, for the code flow only)')
    .option(
      '--auto-approve',
      'skip the sign-in and consent pages: approve every valid request (and a device code opened by its complete address)',
    )
    .option('--device-interval <seconds>', 'seconds between device-code polls (RFC 8628 interval)', parseSeconds(1), 5)
    .option('--device-lifetime <seconds>', 'seconds a device code lives', parseSeconds(1), 600)
    .addOption(
      new Option(
        '--flavor <name>',
        'token info and revoke as the spec describes them, as Doorkeeper 5 answers, or as Doorkeeper 6 (plus RFC 8414 metadata and RFC 9207 iss)',
      )
        .choices(['spec', 'doorkeeper5', 'doorkeeper6'] as const)
        .default('spec' as const),
    )
    .option(
      '--state <file>',
      "keep the client secret and every issued token in this file (created 0600) so that signed-in profiles survive the emulator's restart",
    )
    .option(
      '--client-secret-file <path>',
      "the demo client's secret, read from this file (default: random, or the --state file's)",
    )
    .option('--json', 'print the base URL and seeded credentials as one JSON line on stdout')
    .addHelpText(
      'after',
      `
Examples:
  $ mmauth emulator
  $ mmauth emulator --port 0 --json --auto-approve     # for scripts: read the line, then test against it
  $ mmauth emulator --token-ttl 0 --flavor doorkeeper5
  $ mmauth emulator --flavor doorkeeper6                # serves /.well-known/oauth-authorization-server
  $ mmauth emulator --state ~/.mmauth-emulator.json     # restarts keep the secret and the tokens issued
  $ MMAUTH_BASE_URL=http://127.0.0.1:4010 MMAUTH_CLIENT_ID=mmauth-public mmauth login   # its public client: no secret`,
    )
    .action(async (options) => runEmulator(options, ctx));
}

/**
 * Starts the emulator (src/emulator) and serves until Ctrl-C, then closes it and returns (exit 0).
 * Prints the base URL and seeded credentials: for people on stderr; with --json one line on stdout
 * `{"base_url","client_id","client_secret","user":{"id","login","password"},"personal_access_token"}`.
 */
export async function runEmulator(options: EmulatorCommandOptions, ctx: AppContext): Promise<void> {
  const out = await ctx.output();
  const { startEmulator } = await import('../emulator/emulator.js');
  // A taken port throws `port_in_use`; the failure map names --port for this command.
  const clientSecret =
    options.clientSecretFile === undefined ? undefined : await readSecretFile(options.clientSecretFile, ctx);
  const emulator = await startEmulator({
    ...(clientSecret === undefined ? {} : { clientSecret }),
    ...(options.state === undefined ? {} : { stateFile: options.state }),
    port: options.port,
    tokenTtlS: options.tokenTtl,
    autoApprove: options.autoApprove === true,
    flavor: options.flavor,
    refreshTokens: options.refreshTokens,
    deviceIntervalS: options.deviceInterval,
    deviceLifetimeS: options.deviceLifetime,
  });
  if (options.json === true) {
    ctx.stdout.write(
      `${JSON.stringify({
        schema_version: SCHEMA_VERSION,
        base_url: emulator.baseUrl,
        client_id: emulator.client.clientId,
        client_secret: emulator.client.clientSecret,
        public_client_id: emulator.publicClient.clientId,
        user: emulator.user,
        personal_access_token: emulator.personalAccessToken,
      })}\n`,
    );
  }
  out.success(`mmauth emulator listening on ${emulator.baseUrl}`);
  out.field('client_id', emulator.client.clientId);
  out.field('client_secret', emulator.client.clientSecret);
  out.field('public client', `${emulator.publicClient.clientId} (no secret: PKCE alone)`);
  out.field('redirect URI', `${emulator.client.redirectUri} (any port)`);
  out.field('user', `${emulator.user.login} / ${emulator.user.password} (id ${emulator.user.id})`);
  out.field('personal token', emulator.personalAccessToken);
  out.field('token TTL', options.tokenTtl === 0 ? 'no expiry' : `${options.tokenTtl} s`);
  out.field('refresh tokens', options.refreshTokens ? 'for the code flow (rotated)' : 'none');
  out.field('flavor', options.flavor + (options.autoApprove === true ? ', auto-approve' : ''));
  out.info(
    `\nTry: MMAUTH_BASE_URL=${emulator.baseUrl} MMAUTH_CLIENT_ID=${emulator.publicClient.clientId} mmauth login\nPress Ctrl-C to stop.`,
  );
  await whenAborted(ctx.signal);
  await emulator.close();
  out.info('emulator stopped');
}
