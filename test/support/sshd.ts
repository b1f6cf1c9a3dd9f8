import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';
import { runCommand, type CommandResult } from './run-command.js';

/** A running OpenSSH server on 127.0.0.1 for this user, and the ssh command line that reaches it. */
export interface TestSshd {
  port: number;
  /** `ssh` arguments up to the destination (key, no host-key prompts, no config of the user's). */
  sshArgs: string[];
  destination: string;
}

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });

/**
 * Starts Debian's sshd (openssh-server, which `.ci/run` installs when missing) on 127.0.0.1 with
 * throw-away host and user keys, for the user running the suite, Unix-socket forwarding allowed
 * (`StreamLocalBindUnlink yes`; `bindUnlink: false`: no, as on servers where a path another user
 * bound first makes the forward fail). Stopped when the test ends. Fails, never skips, without sshd.
 */
export async function startTestSshd(options: { bindUnlink?: boolean } = {}): Promise<TestSshd> {
  const dir = mkdtempSync(join(tmpdir(), 'mmauth-sshd-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true, maxRetries: 5 }));
  const key = (name: string) => execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(dir, name)]);
  key('host_key');
  key('user_key');
  execFileSync('cp', [join(dir, 'user_key.pub'), join(dir, 'authorized_keys')]);
  // sshd's privilege separation directory (created by the package's service, which nothing starts here).
  if (!existsSync('/run/sshd')) mkdirSync('/run/sshd', { mode: 0o755, recursive: true });
  const user = execFileSync('id', ['-un'], { encoding: 'utf8' }).trim();
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    writeFileSync(
      join(dir, 'sshd_config'),
      [
        `Port ${port}`,
        'ListenAddress 127.0.0.1',
        `HostKey ${join(dir, 'host_key')}`,
        `AuthorizedKeysFile ${join(dir, 'authorized_keys')}`,
        `PidFile ${join(dir, 'sshd.pid')}`,
        'StrictModes no',
        'UsePAM no',
        'PasswordAuthentication no',
        'KbdInteractiveAuthentication no',
        'PermitRootLogin prohibit-password',
        'AllowStreamLocalForwarding yes',
        `StreamLocalBindUnlink ${options.bindUnlink === false ? 'no' : 'yes'}`,
        '',
      ].join('\n'),
    );
    const sshd = spawn('/usr/sbin/sshd', ['-D', '-e', '-f', join(dir, 'sshd_config')], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    onTestFinished(() => void sshd.kill('SIGTERM'));
    let log = '';
    const isListening = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), 10_000);
      sshd.stderr.on('data', (chunk: Buffer) => {
        log += chunk.toString();
        if (/Server listening on 127\.0\.0\.1 port/.test(log)) {
          clearTimeout(timer);
          resolve(true);
        }
      });
      sshd.on('exit', () => {
        clearTimeout(timer);
        resolve(false);
      });
    });
    if (!isListening) continue;
    return {
      port,
      sshArgs: [
        '-F',
        '/dev/null',
        '-i',
        join(dir, 'user_key'),
        '-o',
        'BatchMode=yes',
        '-o',
        'StrictHostKeyChecking=no',
        '-o',
        'UserKnownHostsFile=/dev/null',
        '-o',
        'LogLevel=ERROR',
        '-p',
        String(port),
      ],
      destination: `${user}@127.0.0.1`,
    };
  }
  throw new Error('sshd did not start on 127.0.0.1 (is openssh-server installed? .ci/run installs it)');
}

/**
 * Runs `script` (sh -c) on the far side of `ssh -R FORWARD` to `sshd`, with `sshOptions` before the
 * forward; resolves with its exit code and output (bounded: 60 s). Only PATH and HOME reach ssh.
 */
export function overSsh(
  sshd: TestSshd,
  forward: string,
  script: string,
  sshOptions: string[] = [],
): Promise<CommandResult> {
  return runCommand('ssh', [...sshd.sshArgs, ...sshOptions, '-R', forward, sshd.destination, script], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root' },
    timeoutMs: 60_000,
  });
}
