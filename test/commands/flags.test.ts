/**
 * Flag mapping, apart from the logic: each argv is parsed by the real program and the options
 * object its action would hand to runX is compared, with the action replaced by a recorder.
 */
import type { Command } from '@commander-js/extra-typings';
import { describe, expect, it } from 'vitest';
import { conflictMessage } from '../../src/commands/conflicts.js';
import { buildProgram } from '../../src/program.js';
import { createTestContext } from '../support/context.js';

/** The options `argv` maps to, or the commander error code when parsing fails. */
async function optionsFor(argv: string[]): Promise<Record<string, unknown> | { error: string; message: string }> {
  const ctx = createTestContext();
  const program = buildProgram(ctx, '0.0.0') as unknown as Command;
  let recorded: Record<string, unknown> | undefined;
  for (const command of program.commands) {
    command.action((...args: unknown[]) => {
      const options = args.at(-2) as Record<string, unknown>;
      recorded = { ...options };
    });
  }
  try {
    await program.parseAsync(['node', 'mmauth', ...argv]);
  } catch (error) {
    const failure = error as { code: string; message: string };
    return { error: failure.code, message: failure.message };
  }
  return recorded ?? {};
}

/** The emulator's device grant settings by default: a poll every 5 s, codes for 10 minutes. */
const DEVICE_DEFAULTS = { deviceInterval: 5, deviceLifetime: 600 };

describe('flags → options', () => {
  it.each<[string[], Record<string, unknown>]>([
    [['token'], { minTtl: 0, renew: true, timeout: 30 }],
    [
      ['token', '--min-ttl', '300', '--profile', 'ci', '--json'],
      { minTtl: 300, profile: 'ci', json: true, renew: true, timeout: 30 },
    ],
    [['header', '--verbose', '--no-renew'], { minTtl: 0, verbose: true, renew: false, timeout: 30 }],
    [['refresh', '--timeout', '9'], { timeout: 9 }],
    [['api', '/api/me'], { header: [], field: [], timeout: 30, renew: true }],
    [
      ['api', '/x', '-X', 'PUT', '-H', 'A: 1', '-H', 'B: 2', '-d', '@-', '-i', '--silent', '--no-renew'],
      {
        method: 'PUT',
        header: ['A: 1', 'B: 2'],
        data: '@-',
        field: [],
        include: true,
        silent: true,
        timeout: 30,
        renew: false,
      },
    ],
    [['api', '/x', '-f', 'a=1', '-f', 'b=2'], { header: [], field: ['a=1', 'b=2'], timeout: 30, renew: true }],
    [['status', '--profile', 'x'], { profile: 'x', timeout: 30 }],
    [['info'], { timeout: 30, renew: true }],
    [
      ['info', '--base-url', 'https://a.example', '--timeout', '7'],
      { baseUrl: 'https://a.example', timeout: 7, renew: true },
    ],
    [['info', '--no-renew'], { timeout: 30, renew: false }],
    [
      ['client-credentials', '--no-save', '--scope', 'service', '--client-id', 'app'],
      { timeout: 30, save: false, scope: 'service', clientId: 'app' },
    ],
    [['client-credentials', '--client-secret-file', '/s'], { timeout: 30, save: true, clientSecretFile: '/s' }],
    [['login'], { timeout: 30, wait: 300, browser: true, verify: true, probe: true }],
    [
      ['login', '--no-browser', '--wait', '5', '--implicit'],
      { timeout: 30, wait: 5, browser: false, verify: true, implicit: true, probe: true },
    ],
    [
      ['login', '--redirect-uri', 'http://127.0.0.1:8976/cb'],
      { timeout: 30, wait: 300, browser: true, verify: true, redirectUri: 'http://127.0.0.1:8976/cb', probe: true },
    ],
    [['login', '--no-probe'], { timeout: 30, wait: 300, browser: true, verify: true, probe: false }],
    [
      ['login', '--with-token', '--no-verify'],
      { timeout: 30, wait: 300, browser: true, verify: false, withToken: true, probe: true },
    ],
    [['revoke', '--client-secret-stdin'], { timeout: 30, clientSecretStdin: true }],
    [['logout', '--local-only'], { timeout: 30, localOnly: true }],
    [['emulator'], { port: 4010, tokenTtl: 7200, flavor: 'spec', refreshTokens: true, ...DEVICE_DEFAULTS }],
    [
      ['emulator', '--no-refresh-tokens'],
      { port: 4010, tokenTtl: 7200, flavor: 'spec', refreshTokens: false, ...DEVICE_DEFAULTS },
    ],
    [
      ['emulator', '--device-interval', '1', '--device-lifetime', '30'],
      { port: 4010, tokenTtl: 7200, flavor: 'spec', refreshTokens: true, deviceInterval: 1, deviceLifetime: 30 },
    ],
    [
      ['emulator', '--port', '0', '--token-ttl', '0', '--flavor', 'doorkeeper5', '--auto-approve'],
      { port: 0, tokenTtl: 0, flavor: 'doorkeeper5', autoApprove: true, refreshTokens: true, ...DEVICE_DEFAULTS },
    ],
  ])('%j', async (argv, expected) => {
    expect(await optionsFor(argv)).toEqual(expected);
  });

  it.each([
    [['token', '--min-ttl', '-1'], 'commander.invalidArgument'],
    [['info', '--timeout', '0'], 'commander.invalidArgument'],
    [['login', '--client-secret'], 'commander.unknownOption'],
    [['emulator', '--flavor', 'other'], 'commander.invalidArgument'],
  ])('%j is refused: %s', async (argv, code) => {
    expect(await optionsFor(argv)).toMatchObject({ error: code });
  });

  it.each([
    [
      ['login', '--client-secret-file', 'f', '--client-secret-stdin'],
      '--client-secret-file and --client-secret-stdin exclude each other',
    ],
    [
      ['revoke', '--client-secret-stdin', '--client-secret-file', 'f'],
      '--client-secret-file and --client-secret-stdin exclude each other',
    ],
    [
      ['login', '--implicit', '--client-secret-stdin'],
      'the implicit flow uses no client secret: drop --client-secret-file/--client-secret-stdin',
    ],
    [
      ['login', '--with-token', '--scope', 'service'],
      '--with-token stores a token you already have: it takes no --implicit, --redirect-uri or --scope',
    ],
    [
      ['login', '--with-token', '--redirect-uri', 'http://127.0.0.1:1/c'],
      '--with-token stores a token you already have: it takes no --implicit, --redirect-uri or --scope',
    ],
  ])('%j: options that exclude each other, in mmauth’s words', async (argv, message) => {
    const result = await optionsFor(argv);
    expect(result).toMatchObject({ error: 'commander.conflictingOption' });
    expect(conflictMessage((result as { message: string }).message)).toBe(message);
  });
});

describe('buildProgram registers only the command argv names outright', () => {
  const names = (argv?: string[]) =>
    (buildProgram(createTestContext(), '0.0.0', argv) as unknown as Command).commands.map((c) => c.name());

  it('all seventeen without argv, for global help, help, an unknown word and completion', () => {
    const all = names();
    expect(all).toHaveLength(17);
    for (const argv of [['--help'], [], ['help', 'token'], ['tokn'], ['completion', 'bash'], ['--version']]) {
      expect(names(['node', 'mmauth', ...argv])).toEqual(all);
    }
  });

  it('only that one for `mmauth token …`', () => {
    expect(names(['node', 'mmauth', 'token', '--json'])).toEqual(['token']);
    expect(names(['node', 'mmauth', 'client-credentials'])).toEqual(['client-credentials']);
  });
});

describe('a value that begins with a dash is a value where the option takes one', () => {
  it.each<[string[], Record<string, unknown>]>([
    [['client-credentials', '--client-id', '-Vm9nQ2x'], { clientId: '-Vm9nQ2x' }],
    [['client-credentials', '--client-id=-Vm9nQ2x'], { clientId: '-Vm9nQ2x' }],
    [['token', '--profile', '-Vx'], { profile: '-Vx' }],
    [['token', '--profile', '-h'], { profile: '-h' }],
  ])('%j', async (argv, expected) => {
    expect(await optionsFor(argv)).toMatchObject(expected);
  });

  it('`mmauth -V` and `mmauth --version` still print the version', async () => {
    for (const flag of ['-V', '--version'])
      expect(await optionsFor([flag])).toMatchObject({ error: 'commander.version' });
  });
});
