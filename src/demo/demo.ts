/**
 * `npm run demo`: the main job end to end against the emulator, through the real `mmauth` binary
 * (README "Quick start" lists the steps). Exits 0 only if every step exited as expected.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startEmulator } from '../emulator/emulator.js';
import { maskToken } from '../ui/format.js';

const here = fileURLToPath(new URL('.', import.meta.url));
const bin = resolve(here, '../../bin/mmauth.cjs');
const agent = resolve(here, 'headless-browser.js');

interface Step {
  title: string;
  args: string[];
  expectedExit: number;
  env?: Record<string, string | undefined>;
  /** Written to the command's stdin. */
  input?: string;
  /** How the command line is shown, when it differs from the arguments. */
  shown?: string;
  /** Milliseconds to wait before the step (to let a token go stale). */
  waitMs?: number;
  /** The step prints the user's token (--json); with `mustChange`, a different one than before. */
  printsUserToken?: 'first' | 'mustChange';
}

/** The demo's tokens live 6 s, so that one goes stale and renews within the demo (the margin is half that). */
const TOKEN_TTL_S = 6;

function runStep(step: Step, env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string }> {
  return new Promise((done) => {
    let stdout = '';
    const child = spawn(process.execPath, [bin, ...step.args], {
      env: { ...env, ...step.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    child.stdin.end(step.input ?? '');
    const indent = (chunk: Buffer) => chunk.toString().replace(/^(?=.)/gm, '    ');
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      process.stdout.write(indent(chunk));
    });
    child.stderr.on('data', (chunk: Buffer) => process.stdout.write(indent(chunk)));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ code, stdout });
    });
  });
}

async function main(): Promise<number> {
  const startedMs = Date.now();
  const configDir = mkdtempSync(join(tmpdir(), 'mmauth-demo-'));
  const emulator = await startEmulator({ port: 0, tokenTtlS: TOKEN_TTL_S });
  const say = (line = '') => process.stdout.write(`${line}\n`);
  try {
    say(`mmauth demo — emulator at ${emulator.baseUrl}, config in ${configDir}`);
    say(
      `  client_id ${emulator.client.clientId}, client_secret ${maskToken(emulator.client.clientSecret)} (in MMAUTH_CLIENT_SECRET), user ${emulator.user.login}`,
    );
    say('  credentials in that config file (MMAUTH_CREDENTIAL_STORE=file): the demo leaves your keyring alone');
    const env: NodeJS.ProcessEnv = {
      ...Object.fromEntries(
        Object.entries(process.env).filter(([key]) => !key.startsWith('MMAUTH_') && key !== 'BROWSER'),
      ),
      MMAUTH_CONFIG_DIR: configDir,
      MMAUTH_BASE_URL: emulator.baseUrl,
      MMAUTH_CLIENT_ID: emulator.client.clientId,
      MMAUTH_CLIENT_SECRET: emulator.client.clientSecret,
      // The demo's credentials die with its temporary config: none may be left in your keyring.
      MMAUTH_CREDENTIAL_STORE: 'file',
    };
    const steps: Step[] = [
      {
        title: 'sign in through the browser (authorization code flow, PKCE)',
        args: ['login', '--scope', 'service userinfo.email', '--json'],
        expectedExit: 0,
        env: { BROWSER: `${process.execPath} ${agent}` },
        shown: 'BROWSER=headless-browser mmauth login --scope "service userinfo.email" --json',
        printsUserToken: 'first',
      },
      { title: "inspect the user's token", args: ['info', '--json'], expectedExit: 0 },
      {
        title: "call the API with the user's token (the emulator's own protected resource)",
        args: ['api', '/api/me'],
        expectedExit: 0,
      },
      {
        title: `the token goes stale (the emulator issues ${TOKEN_TTL_S}-second tokens here): \`mmauth token\` renews it with its refresh token`,
        args: ['token', '--json'],
        expectedExit: 0,
        waitMs: (TOKEN_TTL_S / 2 + 0.5) * 1000,
        shown: `sleep ${TOKEN_TTL_S / 2 + 0.5}; mmauth token --json`,
        printsUserToken: 'mustChange',
      },
      {
        title:
          'the implicit flow, in profile "browser" (token in the URL fragment, relayed by the listener page; no client secret)',
        args: ['login', '--implicit', '--profile', 'browser'],
        expectedExit: 0,
        env: { BROWSER: `${process.execPath} ${agent}`, MMAUTH_CLIENT_SECRET: undefined },
        shown: 'BROWSER=headless-browser mmauth login --implicit --profile browser',
      },
      {
        title: 'a personal access token from stdin, in profile "pat" (checked with token info)',
        args: ['login', '--with-token', '--profile', 'pat'],
        expectedExit: 0,
        input: `${emulator.personalAccessToken}\n`,
        shown: 'mmauth login --with-token --profile pat < pat.txt',
      },
      {
        title: 'a token for the client itself, in profile "ci"',
        args: ['client-credentials', '--profile', 'ci', '--json'],
        expectedExit: 0,
      },
      { title: 'every profile at a glance', args: ['status'], expectedExit: 0 },
      { title: "revoke the user's token (confirmed through token info)", args: ['revoke'], expectedExit: 0 },
      { title: 'nothing is stored any more for the profile', args: ['info'], expectedExit: 4 },
      {
        title: 'the server refuses the revoked token',
        args: ['info'],
        expectedExit: 4,
        shown: 'MMAUTH_TOKEN=<the revoked token> mmauth info',
      },
      {
        title: 'log out of profile "browser" (revoke, confirm, forget)',
        args: ['logout', '--profile', 'browser'],
        expectedExit: 0,
      },
    ];
    let failures = 0;
    let userToken = '';
    for (const [index, step] of steps.entries()) {
      say();
      say(`[${index + 1}/${steps.length}] ${step.title}`);
      say(`  $ ${step.shown ?? `mmauth ${step.args.join(' ')}`}`);
      if (step.shown?.startsWith('MMAUTH_TOKEN=') === true) {
        step.env = { MMAUTH_TOKEN: userToken };
      }
      if (step.waitMs !== undefined) await new Promise((resolve) => setTimeout(resolve, step.waitMs));
      const { code, stdout } = await runStep(step, env);
      if (stdout !== '' && !stdout.endsWith('\n')) say();
      let isRenewed = true;
      if (step.printsUserToken !== undefined) {
        const json: unknown = JSON.parse(stdout || '{}');
        const token =
          typeof json === 'object' && json !== null && 'access_token' in json && typeof json.access_token === 'string'
            ? json.access_token
            : '';
        isRenewed = step.printsUserToken === 'first' || (token !== '' && token !== userToken);
        if (!isRenewed) say('  ✗ the token was not renewed');
        userToken = token;
      }
      const isExpected = code === step.expectedExit && isRenewed;
      if (!isExpected) failures++;
      say(`  ${isExpected ? '✓' : '✗'} exit ${code ?? 'killed'} (expected ${step.expectedExit})`);
    }
    say();
    say(
      failures === 0
        ? `demo passed: ${steps.length} steps in ${((Date.now() - startedMs) / 1000).toFixed(1)} s`
        : `demo FAILED: ${failures} of ${steps.length} steps did not exit as expected`,
    );
    return failures === 0 ? 0 : 1;
  } finally {
    await emulator.close();
    rmSync(configDir, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`demo failed: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
