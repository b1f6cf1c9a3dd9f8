/**
 * The documents the rest of the suite meets least, run here so that their schemas are exercised
 * too (runCli checks every --json document against schemas/: test/support/json-documents.ts).
 */
import { describe, expect, it } from 'vitest';
import { makeConfigDir, runCli } from '../support/cli.js';

describe('--json documents and their schemas', () => {
  it('profile create, set, list and remove; token and header with MMAUTH_TOKEN', async () => {
    const env = { MMAUTH_CONFIG_DIR: makeConfigDir() };
    const create = await runCli(['profile', 'create', 'work', '--base-url', 'https://maps.example.test', '--json'], {
      env,
    });
    expect(create.code, create.stderr).toBe(0);
    expect(JSON.parse(create.stdout)).toMatchObject({ schema_version: 1, profile: 'work', created: true });
    const set = await runCli(['profile', 'set', 'work', '--scope', 'service', '--json'], { env });
    expect(JSON.parse(set.stdout)).toMatchObject({ schema_version: 1, updated: true, scope: 'service' });
    const list = await runCli(['profile', 'list', '--json'], { env });
    expect(JSON.parse(list.stdout).schema_version).toBe(1);
    const given = { ...env, MMAUTH_TOKEN: 'given-token' };
    const token = await runCli(['token', '--json'], { env: given });
    expect(JSON.parse(token.stdout)).toMatchObject({ schema_version: 1, access_token: 'given-token', grant: null });
    const header = await runCli(['header', '--json'], { env: given });
    expect(JSON.parse(header.stdout)).toEqual({ Authorization: 'Bearer given-token' });
    const remove = await runCli(['profile', 'remove', 'work', '--json'], { env });
    expect(remove.code, remove.stderr).toBe(0);
    expect(JSON.parse(remove.stdout)).toMatchObject({ schema_version: 1, removed: true });
  });
});
