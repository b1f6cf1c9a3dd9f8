import { Option, type Command } from '@commander-js/extra-typings';
import type { AppContext } from '../../context.js';
import { MmauthError } from '../../errors.js';
import type { LoginOptions } from './login-options.js';
import {
  MAX_TIMER_SECONDS,
  parseSeconds,
  withClientOptions,
  withStorageOption,
  withCommonOptions,
} from '../options.js';

export type { LoginOptions };

/** Registers `mmauth login`: flags, exclusions, description and examples; the logic is runLogin. */
export function registerLogin(program: Command, ctx: AppContext): void {
  withStorageOption(withClientOptions(withCommonOptions(program.command('login'))))
    .description('sign in through the browser (authorization code flow with PKCE) and store the token')
    .option('--scope <scopes>', 'space-separated scopes to request (default "service"; a checkbox on a terminal)')
    .option(
      '--redirect-uri <uri>',
      'fixed loopback redirect URI, e.g. http://127.0.0.1:8976/callback (default: 127.0.0.1, an ephemeral port, /callback)',
    )
    .option(
      '--callback-path <path>',
      "the redirect URI's path, kept in the profile (default /callback); a path of its own per server guards against mix-up",
    )
    .option(
      '--wait <seconds>',
      'how long to wait for the browser to come back',
      parseSeconds(1, MAX_TIMER_SECONDS),
      300,
    )
    .option('--no-browser', 'do not open a browser; print the URL only')
    .addOption(
      new Option('--device', 'sign in on another device: enter a short code there (RFC 8628 device grant)').conflicts([
        'implicit',
        'redirectUri',
        'complete',
        'paste',
        'withToken',
      ]),
    )
    .option(
      '--device-authorization-url <url>',
      "the server's device authorization endpoint where its metadata names none (GitLab: BASE/oauth/authorize_device); kept in the profile",
    )
    .option('--qr', 'with the device grant: draw the address (with the code in it) as a QR code for a phone')
    .option(
      '--paste',
      'where no browser can open, print the address and read back the one the browser ended on (not the device grant)',
    )
    .addOption(
      new Option(
        '--implicit',
        'use the implicit flow (token in the URL fragment; deprecated, RFC 9700 §2.1.2; no client secret)',
      ).conflicts(['clientSecretFile', 'clientSecretStdin']),
    )
    .addOption(
      new Option(
        '--with-token',
        'store a personal access token read from standard input instead of signing in',
      ).conflicts(['implicit', 'redirectUri', 'callbackPath', 'scope']),
    )
    .option('--no-verify', 'with --with-token: store the token without asking token info about it')
    .addOption(
      new Option('--start', 'two-step login: print the URL and store the request; finish with --complete').conflicts([
        'complete',
        'withToken',
      ]),
    )
    .addOption(
      new Option(
        '--complete [url]',
        'two-step login: finish with the address the browser ended on (- reads stdin); after --device --start, no address: wait for the approval',
      ).conflicts('withToken'),
    )
    .option(
      '--no-probe',
      'do not ask the authorization endpoint first (it catches an unknown client, redirect URI or scope at once)',
    )
    .option(
      '--replace',
      "replace the profile's token even if it is a client's or another server's (its old credentials are dropped)",
    )
    .addHelpText(
      'after',
      `
While login waits, you may paste the full URL the browser ended on (the browser runs on another
machine and cannot reach 127.0.0.1, e.g. over SSH) and press Enter.

Examples:
  $ mmauth login --base-url https://maps.example.com --client-id abc123
  $ MMAUTH_CLIENT_SECRET=… mmauth login --scope "service userinfo.email" --no-browser
  $ mmauth login --redirect-uri http://127.0.0.1:8976/callback --profile work
  $ mmauth login --implicit --client-id abc123
  $ mmauth login --device                # on a machine with no browser: enter a short code on another device
  $ mmauth login --with-token --base-url https://maps.example.com < token.txt

For programs and remote machines (two steps, nothing listens; --json everywhere):
  $ mmauth login --start --json      # {"authorization_url", "redirect_uri", "expires_at", "profile"}
  (a person opens authorization_url, allows access, and copies the address the browser ends on)
  $ mmauth login --complete 'http://127.0.0.1:…/callback?code=…&state=…' --json
  $ mmauth login --device --start --json   # {"user_code", "verification_uri", …}: a person enters the code
  $ mmauth login --complete --json         # then: waits for the approval, stores the grant
  $ mmauth token                     # then, in every script: a valid token, renewed when needed`,
    )
    .action(async (options) => runLogin(options, ctx));
}

/**
 * Signs in and stores the token in the profile: with `withToken` a personal access token
 * (runLoginWithToken), else through the browser (runBrowserLogin: the code flow with PKCE, or the
 * implicit flow). Throws `usage` for --no-verify without --with-token, and what those throw.
 */
export async function runLogin(options: LoginOptions, ctx: AppContext): Promise<void> {
  if (options.withToken === true) {
    await (await import('./login-with-token.js')).runLoginWithToken(options, ctx);
    return;
  }
  if (options.verify === false) {
    throw new MmauthError('usage', '--no-verify only applies to --with-token');
  }
  const { complete } = options;
  if (options.device === true || complete === true) {
    const device = await import('./login-device.js');
    if (options.start === true) await device.runDeviceStart(options, ctx);
    else if (complete === true) await device.runDeviceComplete(options, ctx);
    else await device.runDeviceLogin(options, ctx);
    return;
  }
  if (options.start === true || complete !== undefined) {
    const twoStep = await import('./login-two-step.js');
    if (complete !== undefined) await twoStep.runLoginComplete({ ...options, complete }, ctx);
    else await twoStep.runLoginStart(options, ctx);
    return;
  }
  await (await import('./login-browser.js')).runBrowserLogin(options, ctx);
}
