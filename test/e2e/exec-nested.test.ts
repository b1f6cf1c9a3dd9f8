/**
 * Inside `exec`, the token file is the truth (decisions 69): a nested mmauth (the CLI's `api` and
 * `token`, the library's getToken) run by the child after exec's first renewal uses the file's
 * token, not the start token in MMAUTH_TOKEN, which the renewal's first use ended on a rotating
 * server.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { BIN, HEADLESS_BROWSER, makeConfigDir, runCli, REMOVE_TREE } from '../support/cli.js';
import { startTestEmulator } from '../support/emulator.js';

const LIBRARY = resolve(import.meta.dirname, '../../dist/index.js');

describe('mmauth inside exec follows the token file', () => {
  it("after a renewal the child's `mmauth api` gets 200, and its `mmauth token` and getToken() give the file's token", async () => {
    const emulator = await startTestEmulator({ tokenTtlS: 4, flavor: 'doorkeeper5' });
    const configDir = makeConfigDir();
    const env = { ...emulator.env(configDir, { BROWSER: HEADLESS_BROWSER }), MMAUTH_CREDENTIAL_STORE: 'file' };
    expect((await runCli(['login'], { env })).code).toBe(0);
    const out = mkdtempSync(join(tmpdir(), 'mmauth-nested-'));
    onTestFinished(() => rmSync(out, REMOVE_TREE));
    const node = JSON.stringify(process.execPath);
    const bin = JSON.stringify(BIN);
    const library = `import(${JSON.stringify(LIBRARY)}).then(async (m) => console.log((await m.getToken()).accessToken))`;
    // The child waits for exec's renewal (the file changes), and for its hand-over, then runs mmauth.
    const script = [
      'start="$MMAUTH_TOKEN"',
      'while [ "$(cat "$MMAUTH_TOKEN_FILE")" = "$start" ]; do sleep 0.1; done',
      'sleep 0.5',
      `${node} ${bin} api /api/me > "$OUT/api.out" 2> "$OUT/api.err"; echo $? > "$OUT/api.code"`,
      `${node} ${bin} token > "$OUT/token.out"`,
      `${node} --input-type=module -e '${library}' > "$OUT/library.out"`,
      'cat "$MMAUTH_TOKEN_FILE" > "$OUT/file.out"',
      'echo "$start" > "$OUT/start.out"',
    ].join('; ');
    const result = await runCli(['exec', '--', 'sh', '-c', script], { env: { ...env, OUT: out }, timeoutMs: 40_000 });
    expect(result.code, result.stderr).toBe(0);
    const read = (name: string) => readFileSync(join(out, name), 'utf8').trim();
    expect(read('api.code'), read('api.err')).toBe('0');
    expect(JSON.parse(read('api.out'))).toMatchObject({ id: expect.anything() });
    const start = read('start.out');
    for (const name of ['token.out', 'library.out']) {
      expect(read(name), name).not.toBe(start);
      expect(read(name), name).toMatch(/^[\w-]{20,}$/);
    }
  }, 60_000);
});
