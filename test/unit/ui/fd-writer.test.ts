import { execFileSync } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, readSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createFdWriter, isTerminalFd, type StreamSource } from '../../../src/ui/fd-writer.js';

/** A FIFO opened read-write and non-blocking: writes beyond its buffer (64 KiB) fail with EAGAIN. */
function nonBlockingPipe(): number {
  const dir = mkdtempSync(join(tmpdir(), 'mmauth-fifo-'));
  const path = join(dir, 'fifo');
  execFileSync('mkfifo', [path]);
  const fd = openSync(path, constants.O_RDWR | constants.O_NONBLOCK);
  onTestFinished(() => {
    closeSync(fd);
    rmSync(dir, { recursive: true, force: true });
  });
  return fd;
}

function drain(fd: number): Buffer {
  const chunks: Buffer[] = [];
  const buffer = Buffer.alloc(65536);
  for (;;) {
    try {
      const read = readSync(fd, buffer);
      if (read === 0) break;
      chunks.push(Buffer.from(buffer.subarray(0, read)));
    } catch {
      break; // EAGAIN: empty
    }
  }
  return Buffer.concat(chunks);
}

function fakeStream(): { source: StreamSource; written: () => Buffer; calls: () => number } {
  const chunks: Buffer[] = [];
  let calls = 0;
  const stream = {
    write(chunk: string | Uint8Array, callback?: () => void) {
      calls += 1;
      chunks.push(Buffer.from(chunk));
      callback?.();
      return true;
    },
  };
  return {
    source: () => stream as unknown as ReturnType<StreamSource>,
    written: () => Buffer.concat(chunks),
    calls: () => calls,
  };
}

describe('createFdWriter', () => {
  it('writes straight to the descriptor, never creating the stream', () => {
    const fd = nonBlockingPipe();
    const stream = fakeStream();
    const writer = createFdWriter(fd, stream.source);
    writer.write('héllo\n');
    writer.write('world\n');
    expect(drain(fd).toString('utf8')).toBe('héllo\nworld\n');
    expect(stream.calls()).toBe(0);
  });

  it('hands the rest to the stream when the descriptor would block (EAGAIN), keeping every byte in order', async () => {
    const fd = nonBlockingPipe();
    const stream = fakeStream();
    const writer = createFdWriter(fd, stream.source);
    const text = Array.from({ length: 30_000 }, (_, i) => `line ${i}\n`).join('');
    writer.write(text);
    writer.write('after\n');
    await writer.flush();
    const direct = drain(fd);
    expect(stream.calls()).toBeGreaterThan(0);
    expect(Buffer.concat([direct, stream.written()]).toString('utf8')).toBe(`${text}after\n`);
  });

  it('knows a pipe is no terminal without asking the stream', () => {
    const stream = fakeStream();
    const writer = createFdWriter(nonBlockingPipe(), stream.source);
    expect(writer.isTTY).toBe(false);
    expect(writer.columns).toBeUndefined();
    expect(stream.calls()).toBe(0);
  });
});

describe('isTerminalFd', () => {
  it('knows /dev/null (a character device, like a terminal) is none, without asking the stream', () => {
    const fd = openSync('/dev/null', 'w');
    onTestFinished(() => closeSync(fd));
    let asked = 0;
    expect(isTerminalFd(fd, () => ({ isTTY: (asked += 1) > 0 }))).toBe(false);
    expect(asked).toBe(0);
  });

  it('asks the stream for any other character device', () => {
    const fd = openSync('/dev/zero', 'r');
    onTestFinished(() => closeSync(fd));
    expect(isTerminalFd(fd, () => ({ isTTY: true }))).toBe(true);
  });
});
