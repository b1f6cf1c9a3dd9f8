/**
 * `exec --sandbox` and the other mmauth runs of the same user that come and go while its child runs
 * (attack S3, continued): a run that starts after the child is hidden from it as well as one that
 * was there before, and runs that end while the sandbox is being set up never keep it from starting
 * (a path listed to be hidden that is gone before the engine mounts over it).
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { makeScratchDir, runCli, startCli, type RunningCli } from '../support/cli.js';
import { fileLogin } from '../support/file-login.js';
import { until } from '../support/until.js';
import { reportingExec } from '../support/reporting-exec.js';

/**
 * A child that says `ready`, waits for the file `go` in its working directory to name a path, then
 * prints `dir:<listing of that path's directory or "denied">` and `file:<its content or "denied">`.
 */
const PRYING_CHILD = [
  'echo ready',
  'while [ ! -s go ]; do sleep 0.05; done',
  'target=$(cat go)',
  'echo "dir:$(ls "$(dirname "$target")" 2>/dev/null || echo denied)"',
  'echo "file:$(cat "$target" 2>/dev/null || echo denied)"',
].join('; ');

/** `mmauth exec ARGS -- sh -c PRYING_CHILD` in its own working directory; and how to point it at a path. */
function pryingExec(env: Record<string, string>, args: string[]): { run: RunningCli; point: (path: string) => void } {
  const cwd = makeScratchDir('prying-', 0o755);
  const run = startCli(['exec', ...args, '--', 'sh', '-c', PRYING_CHILD], { env, cwd, timeoutMs: 60_000 });
  return { run, point: (path) => writeFileSync(join(cwd, 'go'), `${path}\n`) };
}

const laterExec = reportingExec;

describe('exec --sandbox and runs that start after its child', () => {
  it('another exec started after the sandboxed child: its token file and directory stay hidden (without --sandbox, the control, the child reads the token)', async () => {
    const { env } = await fileLogin();
    const control = pryingExec(env, []);
    const sandboxed = pryingExec(env, ['--sandbox']);
    await control.run.waitForStdout(/^ready$/m, 30_000);
    await sandboxed.run.waitForStdout(/^ready$/m, 30_000);

    const later = await laterExec(env);
    expect(later.token.length).toBeGreaterThan(10);
    control.point(later.tokenFile);
    sandboxed.point(later.tokenFile);

    const controlResult = await control.run.done;
    expect(controlResult.code, controlResult.stderr).toBe(0);
    expect(controlResult.stdout).toContain(`file:${later.token}`);
    const result = await sandboxed.run.done;
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('dir:denied');
    expect(result.stdout).toContain('file:denied');
    expect(result.stdout).not.toContain(later.token);
  });
});

/**
 * A process that makes and removes run directories named as mmauth's runs name them, in the
 * temporary directory and in this user's runtime root there: a new one every 2 ms, each removed
 * 30 ms later, far more than real runs make, so that one listed to be hidden is certain to be gone
 * before the engine mounts over it if the sandbox lists such directories at all.
 */
function startDirectoryChurn(): { stop: () => Promise<void> } {
  const script = `
    const { mkdtempSync, rmSync, existsSync } = require('node:fs');
    const { join } = require('node:path');
    const { tmpdir } = require('node:os');
    const parents = [tmpdir(), join(tmpdir(), 'mmauth-' + process.getuid())].filter((p) => existsSync(p));
    const alive = [];
    setInterval(() => {
      for (const parent of parents) {
        for (const prefix of ['mmauth-exec-', 'mmauth-proxy-', 'mmauth-sandbox-']) {
          alive.push([Date.now(), mkdtempSync(join(parent, prefix))]);
        }
      }
      while (alive.length > 0 && Date.now() - alive[0][0] >= 30) rmSync(alive.shift()[1], { recursive: true, force: true });
    }, 2);
    const stop = () => {
      for (const [, dir] of alive) rmSync(dir, { recursive: true, force: true });
      process.exit(0);
    };
    process.on('SIGTERM', stop);
    setTimeout(stop, 60000);
    }`;
  const child = spawn(process.execPath, ['-e', script], { stdio: 'ignore' });
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  onTestFinished(() => void child.kill('SIGKILL'));
  return {
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

describe('exec --sandbox while other runs come and go', () => {
  it('with plain execs starting and ending all the while, and their directories made and removed faster still, every sandboxed run starts and exits 0', async () => {
    const RUNS = 6;
    const { env } = await fileLogin();
    // The runtime root exists before the churn looks for it, as it does once mmauth has run.
    expect((await runCli(['exec', '--', 'true'], { env, timeoutMs: 30_000 })).code).toBe(0);
    let churning = true;
    let churned = 0;
    const churn = async () => {
      while (churning) {
        await runCli(['exec', '--', 'sleep', '0.2'], { env, timeoutMs: 30_000 });
        churned += 1;
      }
    };
    const churners = [churn(), churn()];
    const directories = startDirectoryChurn();
    try {
      await until(() => churned >= 2, 30_000, 'the churn to begin');
      const outcomes: string[] = [];
      for (let i = 0; i < RUNS; i++) {
        const run = await runCli(['exec', '--sandbox', '--', 'true'], {
          env,
          cwd: makeScratchDir('churn-', 0o755),
          timeoutMs: 30_000,
        });
        outcomes.push(run.code === 0 ? 'ok' : `exit ${run.code}: ${run.stderr.split('\n')[0] ?? ''}`);
      }
      expect(outcomes).toEqual(Array(RUNS).fill('ok'));
    } finally {
      churning = false;
      await Promise.all([...churners, directories.stop()]);
    }
    expect(churned).toBeGreaterThan(RUNS);
    // Six sandboxed runs one after another beside the churn, each with its own 30 s bound: the test's
    // own bound is theirs together, not one wait's (it passed 30 s beside four busy workers).
  }, 180_000);
});
