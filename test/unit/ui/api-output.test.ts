import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { colourJson, writeApiAnswer } from '../../../src/ui/api-output.js';

function writer(isTTY: boolean) {
  const chunks: Buffer[] = [];
  return {
    write: (chunk: string | Uint8Array) => chunks.push(Buffer.from(chunk)),
    isTTY,
    columns: undefined,
    flush: async () => undefined,
    bytes: () => Buffer.concat(chunks),
  };
}

const answer = (body: Buffer | string, rawHeaders: string[] = ['content-type', 'application/json']) => ({
  status: 200,
  statusText: 'OK',
  rawHeaders,
  body: Readable.from([Buffer.from(body)]),
});

describe('writeApiAnswer', () => {
  it("-i on a terminal: the head as plain lines (no \\x0d at line ends), a header's escape sequence shown escaped; on a pipe, HTTP's CRLF", async () => {
    const tty = writer(true);
    const headers = ['content-type', 'text/plain', 'x-note', 'a\u001b[2Jb'];
    await writeApiAnswer(answer('hi', headers), tty, { isInclude: true, isSilent: false }, () => undefined);
    expect(tty.bytes().toString()).toBe('HTTP/1.1 200 OK\ncontent-type: text/plain\nx-note: a\\x1b[2Jb\n\nhi\n');
    const pipe = writer(false);
    await writeApiAnswer(
      answer('hi', headers.slice(0, 2)),
      pipe,
      { isInclude: true, isSilent: false },
      () => undefined,
    );
    expect(pipe.bytes().toString()).toBe('HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\n\r\nhi');
  });

  it('a pipe gets every byte as sent, binary included', async () => {
    const out = writer(false);
    const bytes = Buffer.from([0, 1, 2, 0x1b, 0xff]);
    await writeApiAnswer(answer(bytes), out, { isInclude: false, isSilent: false }, () => undefined);
    expect(out.bytes().equals(bytes)).toBe(true);
  });

  it('a terminal gets JSON pretty-printed (coloured when asked), text sanitised, and binary refused with a note', async () => {
    const json = writer(true);
    await writeApiAnswer(
      answer('{"a":"\\u001b[2J","n":1}'),
      json,
      { isInclude: false, isSilent: false },
      () => undefined,
    );
    expect(json.bytes().toString()).toBe('{\n  "a": "\\u001b[2J",\n  "n": 1\n}\n');
    const coloured = writer(true);
    await writeApiAnswer(
      answer('{"n":1}'),
      coloured,
      { isInclude: false, isSilent: false, isColour: true },
      () => undefined,
    );
    expect(coloured.bytes().toString()).toBe(`${await colourJson('{\n  "n": 1\n}')}\n`);
    expect(coloured.bytes().toString()).toContain('\u001b[36m"n"\u001b[39m');
    const text = writer(true);
    await writeApiAnswer(
      answer('plain \u001b]0;title\u0007 text'),
      text,
      { isInclude: false, isSilent: false },
      () => undefined,
    );
    expect(text.bytes().toString()).toBe('plain \\x1b]0;title\\x07 text\n');
    const notes: string[] = [];
    const binary = writer(true);
    await writeApiAnswer(answer(Buffer.from([0, 159, 146, 150])), binary, { isInclude: false, isSilent: false }, (n) =>
      notes.push(n),
    );
    expect(binary.bytes().byteLength).toBe(0);
    expect(notes[0]).toContain('binary');
  });

  it('-i puts the status line and header fields first; --silent prints no body', async () => {
    const out = writer(false);
    await writeApiAnswer(
      answer('{}', ['Content-Type', 'application/json', 'X-A', '1']),
      out,
      { isInclude: true, isSilent: true },
      () => undefined,
    );
    expect(out.bytes().toString()).toBe('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-A: 1\r\n\r\n');
  });
});
