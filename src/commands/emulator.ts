import { Option, type Command } from '@commander-js/extra-typings';
import type { AppContext } from '../context.js';
import { MmauthError } from '../errors.js';
import { SCHEMA_VERSION } from '../ui/json-document.js';
import { parseSeconds } from './options.js';

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
}

function parsePort(value: string): number {
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65_535) {
    throw new MmauthError('usage', `--port expects 0 to 65535, got "${value}"`);
  }
  return port;
}

/** Registers `mmauth emulator`; the logic is runEmulator. */
export function registerEmulator(program: Command, ctx: AppContext): void {
  program
    .command('emulator')
    .description("serve a local emulator of the service's OAuth interface on 127.0.0.1 until Ctrl-C")
    .option('--port <port>', 'port on 127.0.0.1 (0 picks a free one)', parsePort, 4010)
    .option('--token-ttl <seconds>', 'access token lifetime; 0 for tokens that never expire', parseSeconds(0), 7200)
    .option('--no-refresh-tokens', 'issue no refresh tokens (on by default, for the code flow only)')
    .option('--auto-approve', 'skip the sign-in and consent pages: approve every valid request')
    .addOption(
      new Option(
        '--flavor <name>',
        'token info and revoke as the spec describes them, as Doorkeeper 5 answers, or as Doorkeeper 6 (plus RFC 8414 metadata and RFC 9207 iss)',
      )
        .choices(['spec', 'doorkeeper5', 'doorkeeper6'] as const)
        .default('spec' as const),
    )
    .option('--json', 'print the base URL and seeded credentials as one JSON line on stdout')
    .addHelpText(
      'after',
      `
Examples:
  $ mmauth emulator
  $ mmauth emulator --port 0 --json --auto-approve     # for scripts: read the line, then test against it
  $ mmauth emulator --token-ttl 0 --flavor doorkeeper5
  $ mmauth emulator --flavor doorkeeper6                # serves /.well-known/oauth-authorization-server`,
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
  const emulator = await startEmulator({
    port: options.port,
    tokenTtlS: options.tokenTtl,
    autoApprove: options.autoApprove === true,
    flavor: options.flavor,
    refreshTokens: options.refreshTokens,
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
    `\nTry: MMAUTH_BASE_URL=${emulator.baseUrl} MMAUTH_CLIENT_ID=${emulator.client.clientId} MMAUTH_CLIENT_SECRET=… mmauth login\nPress Ctrl-C to stop.`,
  );
  await new Promise<void>((resolve) => {
    if (ctx.signal.aborted) resolve();
    ctx.signal.addEventListener('abort', () => resolve(), { once: true });
  });
  await emulator.close();
  out.info('emulator stopped');
}
