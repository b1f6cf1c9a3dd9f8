import type {
  ClientOptions,
  CommonOptions,
  LocalOptions,
  SecretOptions,
  TokenOptions,
} from '../settings/setting-options.js';
import { InvalidArgumentError, Option, type Command, type OptionValues } from '@commander-js/extra-typings';

/** The `--profile` help: the whole selection order (README "Profiles"; the project's rules). */
export const PROFILE_HELP =
  'profile to use; else MMAUTH_PROFILE, the nearest .mmauth-profile, `mmauth profile use`, then "default"';

export type { ClientOptions, CommonOptions, LocalOptions, SecretOptions, TokenOptions };

/** Longest --timeout or --wait: what a Node timer can hold (2^31 − 1 ms), about 24.8 days. */
export const MAX_TIMER_SECONDS = Math.floor((2 ** 31 - 1) / 1000);

/** Longest --min-ttl or --token-ttl: ten years. */
const MAX_LIFETIME_SECONDS = 10 * 366 * 86_400;

/** A commander parser of a whole number of seconds from `min` to `max`. */
export function parseSeconds(min: number, max = MAX_LIFETIME_SECONDS): (value: string) => number {
  return (value) => {
    if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
      throw new InvalidArgumentError(`expected a whole number of seconds from ${min} to ${max}`);
    }
    return Number(value);
  };
}

/** Adds --base-url, --profile, --timeout, --json and --verbose. */
export function withCommonOptions<A extends unknown[], O extends OptionValues, G extends OptionValues>(
  command: Command<A, O, G>,
) {
  return command
    .option('--base-url <url>', 'service base URL, https unless loopback (env MMAUTH_BASE_URL)')
    .option('--profile <name>', PROFILE_HELP)
    .option('--timeout <seconds>', 'bound on each HTTP request', parseSeconds(1, MAX_TIMER_SECONDS), 30)
    .option('--json', 'print one JSON document on stdout')
    .option('--verbose', 'trace every HTTP exchange (secrets redacted) and show stack traces (env MMAUTH_DEBUG=1)');
}

/** Adds --profile, --json and --verbose: the options of commands that never reach the network. */
export function withLocalOptions<A extends unknown[], O extends OptionValues, G extends OptionValues>(
  command: Command<A, O, G>,
) {
  return command
    .option('--profile <name>', PROFILE_HELP)
    .option('--json', 'print one JSON document on stdout')
    .option('--verbose', 'show stack traces on errors (env MMAUTH_DEBUG=1)');
}

/** Adds the local options and --min-ttl (for `token` and `header`). */
export function withTokenOptions<A extends unknown[], O extends OptionValues, G extends OptionValues>(
  command: Command<A, O, G>,
) {
  return withLocalOptions(command).option(
    '--min-ttl <seconds>',
    'renew, or fail, unless the token is valid for at least this many more seconds',
    parseSeconds(0),
    0,
  );
}

/** Adds --no-renew and --timeout (for `token` and `header`, over withTokenOptions). */
export function withRenewalOptions<A extends unknown[], O extends OptionValues, G extends OptionValues>(
  command: Command<A, O, G>,
) {
  return command
    .option('--no-renew', 'never renew (never touch the network): hand out the stored token or fail')
    .option(
      '--timeout <seconds>',
      'bound on the renewal request, if one is needed',
      parseSeconds(1, MAX_TIMER_SECONDS),
      30,
    );
}

/** Adds --client-id, --client-secret-file and --client-secret-stdin (exclusive). No option takes the secret itself. */
export function withClientOptions<A extends unknown[], O extends OptionValues, G extends OptionValues>(
  command: Command<A, O, G>,
) {
  return command
    .option('--client-id <id>', 'registered client id (env MMAUTH_CLIENT_ID)')
    .addOption(
      new Option(
        '--client-secret-file <path>',
        'read the client secret from this file (or set MMAUTH_CLIENT_SECRET)',
      ).conflicts('clientSecretStdin'),
    )
    .option('--client-secret-stdin', 'read the client secret from standard input');
}

/** Adds --insecure-storage to a command that stores credentials (gh's flag): the file, in plain text, on purpose. */
export function withStorageOption<A extends unknown[], O extends OptionValues, G extends OptionValues>(
  command: Command<A, O, G>,
) {
  return command.option(
    '--insecure-storage',
    "keep this profile's credentials in the config file in plain text (mode 0600), not in the OS keyring (env MMAUTH_CREDENTIAL_STORE=file)",
  );
}

/**
 * Adds --deadline and --verify (for `token` and `header`): the helper contract of programs that run
 * mmauth as their token command (docs/helper-contract.md).
 */
export function withHelperOptions<A extends unknown[], O extends OptionValues, G extends OptionValues>(
  command: Command<A, O, G>,
) {
  return command
    .option(
      '--deadline <seconds>',
      'answer within this many seconds: the current token (if it meets --min-ttl) with a warning when a renewal is late, else exit 3',
      parseSeconds(1, MAX_TIMER_SECONDS),
    )
    .option(
      '--verify',
      "ask the server whether the token still lives (every run; runs within 2 s share one answer); renew if it doesn't",
    );
}
