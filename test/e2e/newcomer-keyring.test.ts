/**
 * What a new user tripped over (issue 25), with a real Secret Service: a keyring profile whose key
 * is lost reads the same in status, doctor and logout --local-only (11).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { runCli, REMOVE_TREE } from '../support/cli.js';
import { startTestEmulator } from '../support/emulator.js';
import { useSecretService } from '../support/secret-service.js';

const service = useSecretService();

describe('a keyring profile whose key is lost (11)', () => {
  it('status, doctor and logout --local-only all say "stored, but unreadable: its key is not in the keyring" with the one way back', async () => {
    const emulator = await startTestEmulator();
    const home = mkdtempSync(join(tmpdir(), 'mmauth-home-'));
    onTestFinished(() => rmSync(home, REMOVE_TREE));
    const env = {
      ...emulator.env(join(home, 'config')),
      HOME: home,
      XDG_DATA_HOME: join(home, 'data'),
      DBUS_SESSION_BUS_ADDRESS: service.address,
    };
    expect((await runCli(['client-credentials', '--profile', 'ci'], { env })).code).toBe(0);
    await service.wipe();
    const SAID = 'stored, but unreadable: its key is not in the keyring';
    const WAY_BACK = 'run `mmauth client-credentials --profile ci` to store them again';
    const status = await runCli(['status', '--profile', 'ci'], { env });
    expect(status.code).toBe(4);
    expect(status.stderr).toMatch(new RegExp(`token: +${SAID}`));
    expect(status.stderr).toMatch(new RegExp(`to fix: +${WAY_BACK.replace(/[`-]/g, '.')}`));
    const statusJson = await runCli(['status', '--profile', 'ci', '--json'], { env });
    expect(JSON.parse(statusJson.stdout).profiles[0]).toMatchObject({ name: 'ci', credentials_lost: true });
    const doctor = await runCli(['doctor', '--profile', 'ci'], { env });
    expect(doctor.code).toBe(1);
    expect(doctor.stderr).toContain(`keyring: the credentials of profile "ci" are ${SAID}`);
    expect(doctor.stderr).toContain(WAY_BACK);
    const logout = await runCli(['logout', '--profile', 'ci', '--local-only'], { env });
    expect(logout.code).toBe(0);
    expect(logout.stderr).toMatchInlineSnapshot(`
      "! profile "ci": its credentials are stored, but unreadable: its key is not in the keyring; forgotten here, not revoked (a token stays valid on the server until it expires)
        run \`mmauth client-credentials --profile ci\` to store them again
      ✓ Logged out of profile "ci": its stored secrets are forgotten, its other settings stay.
      "
    `);
    expect(logout.stderr).not.toContain('no stored token');
  });
});
