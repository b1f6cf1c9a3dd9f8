import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { socketDistrust } from '../../../src/agent/socket-trust.js';
import { REMOVE_TREE } from '../../support/cli.js';

const uid = process.getuid?.() ?? 0;
const isRoot = uid === 0;

/** A directory with `mode`, removed when the test ends. */
function dir(mode: number): string {
  const path = mkdtempSync(join(tmpdir(), 'mmauth-trust-'));
  chmodSync(path, mode);
  onTestFinished(() => rmSync(path, REMOVE_TREE));
  return path;
}

/** A listening Unix socket at `path`, closed when the test ends. */
async function bind(path: string): Promise<string> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(path, done));
  onTestFinished(() => void server.close());
  return path;
}

describe('socketDistrust: which agent sockets a client speaks to', () => {
  it('trusts its own socket in a private directory, and in a sticky shared one', async () => {
    expect(socketDistrust(await bind(join(dir(0o700), 's.sock')), uid)).toBeUndefined();
    expect(socketDistrust(await bind(join(dir(0o1777), 's.sock')), uid)).toBeUndefined();
  });

  it('follows a link to where the socket really is', async () => {
    const socket = await bind(join(dir(0o700), 's.sock'));
    const link = join(dir(0o700), 'link.sock');
    symlinkSync(socket, link);
    expect(socketDistrust(link, uid)).toBeUndefined();
  });

  it('refuses a directory others may write without the sticky bit, and what is no socket', async () => {
    const shared = dir(0o777);
    expect(socketDistrust(await bind(join(shared, 's.sock')), uid)).toContain('is writable by other users');
    const plain = dir(0o700);
    mkdirSync(join(plain, 'not-a-socket'));
    expect(socketDistrust(join(plain, 'not-a-socket'), uid)).toContain('is not a socket');
  });

  it('passes a missing path (connecting says agent_unreachable)', () => {
    expect(socketDistrust(join(dir(0o700), 'missing.sock'), uid)).toBeUndefined();
  });

  it.runIf(isRoot)(
    "refuses another user's socket in a sticky directory, and any socket in another user's directory",
    async () => {
      const theirs = await bind(join(dir(0o1777), 's.sock'));
      chownSync(theirs, 65534, 65534);
      expect(socketDistrust(theirs, uid)).toMatch(/belongs to .*uid 65534/);
      const theirDir = dir(0o755);
      const mine = await bind(join(theirDir, 's.sock'));
      chownSync(theirDir, 65534, 65534);
      expect(socketDistrust(mine, uid)).toMatch(/the directory .* belongs to .*uid 65534/);
    },
  );

  it.runIf(isRoot)(
    "as root, uses another user's socket bound into a directory only root can write (a container's bind mount)",
    async () => {
      const socket = await bind(join(dir(0o755), 's.sock'));
      chownSync(socket, 65534, 65534);
      expect(socketDistrust(socket, 0)).toBeUndefined();
    },
  );
});
