import { spawn, fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach } from 'vitest';

/** An item as the test Secret Service holds it; `secret` is base64. */
export interface SecretItem {
  attributes: Record<string, string>;
  label: string;
  secret: string;
}

/** A private session bus (dbus-daemon) with the test Secret Service on it. */
export interface TestSecretService {
  /** DBUS_SESSION_BUS_ADDRESS for the processes that should see it. */
  address: string;
  items(): Promise<SecretItem[]>;
  /** Removes every item, as a wiped keyring. */
  wipe(): Promise<void>;
  /** Locks (true) or unlocks the collection; unlock prompts are dismissed. */
  lock(isLocked: boolean): Promise<void>;
  /** Makes every call fail with this D-Bus error name; undefined to stop. */
  fail(errorName: string | undefined): Promise<void>;
  /** Makes the `default` alias name no collection (true), or the one collection again (false). */
  noDefault(isMissing: boolean): Promise<void>;
  /** The provider's method calls since the last time asked. */
  calls(): Promise<string[]>;
  /** Stops the provider only (the bus stays): a bus with no Secret Service. */
  stopProvider(): Promise<void>;
  close(): Promise<void>;
}

const BUS_CONFIG = (socket: string) => `<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=${socket}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
`;

function waitFor<T>(
  what: string,
  ms: number,
  start: (resolve: (value: T) => void, reject: (error: Error) => void) => void,
) {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
    start(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

/**
 * Starts `dbus-daemon` on a socket in a temporary directory (no service activation, no X11) and
 * the dbus-next Secret Service (provider.cjs) in a child process, owning org.freedesktop.secrets.
 * Bounded: each step gives up after 10 s. close() stops both and removes the directory.
 */
export async function startSecretService(): Promise<TestSecretService> {
  const dir = mkdtempSync(join(tmpdir(), 'mmauth-bus-'));
  const socket = join(dir, 'bus');
  writeFileSync(join(dir, 'bus.conf'), BUS_CONFIG(socket));
  const daemon = spawn('dbus-daemon', [`--config-file=${join(dir, 'bus.conf')}`, '--nofork', '--print-address'], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  let provider: ChildProcess | undefined;
  const close = async () => {
    provider?.kill('SIGKILL');
    daemon.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const address = await waitFor<string>('dbus-daemon', 10_000, (resolve, reject) => {
      let text = '';
      daemon.stdout?.on('data', (chunk: Buffer) => {
        text += chunk.toString();
        if (text.includes('\n')) resolve(text.trim());
      });
      daemon.on('error', reject);
      daemon.on('exit', (code) => reject(new Error(`dbus-daemon exited (${code})`)));
    });
    provider = fork(join(import.meta.dirname, 'secret-service/provider.cjs'), [], {
      env: { ...process.env, DBUS_SESSION_BUS_ADDRESS: address },
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    const child = provider;
    let nextId = 1;
    const pending = new Map<number, (reply: { ok: boolean; value?: unknown; error?: string }) => void>();
    await waitFor<void>('Secret Service provider', 10_000, (resolve, reject) => {
      child.on('message', (message: { ready?: boolean; id?: number; ok: boolean; value?: unknown; error?: string }) => {
        if (message.ready === true) resolve();
        else if (message.id !== undefined) pending.get(message.id)?.(message);
      });
      child.on('error', reject);
      child.on('exit', (code) => reject(new Error(`provider exited (${code})`)));
    });
    const ask = <T>(op: string, value?: unknown) =>
      waitFor<T>(`provider ${op}`, 10_000, (resolve, reject) => {
        const id = nextId++;
        pending.set(id, (reply) => (reply.ok ? resolve(reply.value as T) : reject(new Error(reply.error))));
        child.send({ id, op, value });
      });
    return {
      address,
      items: () => ask<SecretItem[]>('items'),
      wipe: () => ask('wipe'),
      lock: (isLocked) => ask('lock', isLocked),
      fail: (errorName) => ask('fail', errorName ?? null),
      noDefault: (isMissing) => ask('noDefault', isMissing),
      calls: () => ask<string[]>('calls'),
      stopProvider: async () => {
        child.kill('SIGKILL');
        await new Promise((resolve) => setTimeout(resolve, 100));
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/**
 * The suite's Secret Service for the tests of one file: started before them, stopped after them,
 * and unlocked, unrefusing and empty before each one. The object stands for the running service.
 */
export function useSecretService(): TestSecretService {
  let started: TestSecretService | undefined;
  beforeAll(async () => {
    started = await startSecretService();
  });
  afterAll(async () => {
    await started?.close();
  });
  beforeEach(async () => {
    await started?.fail(undefined);
    await started?.lock(false);
    await started?.noDefault(false);
    await started?.wipe();
  });
  return new Proxy({} as TestSecretService, {
    get(_target, key) {
      if (started === undefined) throw new Error('the Secret Service is used before it started (outside a test)');
      const value: unknown = Reflect.get(started, key);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(started) : value;
    },
  });
}
