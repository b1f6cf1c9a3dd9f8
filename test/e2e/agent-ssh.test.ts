/**
 * The agent forwarded over SSH, as `ssh -A` forwards ssh-agent: a real OpenSSH server on loopback
 * and the system's `ssh -R REMOTE_SOCKET:$MMAUTH_AGENT_SOCK`. On the far side, with an empty config
 * directory and another HOME, `mmauth token`, `api`, `proxy` and the library get the served
 * profile's token (one renewal while ten clients ask across its expiry), another profile is
 * refused, and after `mmauth agent --stop` each fails with the agent's error code.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, hostProfiles, startAgent } from '../support/agent.js';
import { readConfig, refreshGrants, startTestEmulator } from '../support/emulator.js';
import { overSsh, startTestSshd } from '../support/sshd.js';

type Json = Record<string, any>;

/** The far side's ssh: a forward that fails ends the session; a socket left by an earlier one is replaced. */
const FORWARD_OPTIONS = ['-o', 'ExitOnForwardFailure=yes', '-o', 'StreamLocalBindUnlink=yes'];

describe('the agent over SSH (ssh -R)', () => {
  it('on the far side (empty config, another HOME): token, api, proxy and the library get the served token, ten clients across expiry cause one renewal, another profile is refused; after --stop, agent_unreachable', async () => {
    const emulator = await startTestEmulator({ autoApprove: true });
    const { configDir, env } = await hostProfiles(emulator);
    const { socket } = await startAgent(env);
    const sshd = await startTestSshd();
    const far = mkdtempSync(join(tmpdir(), 'mmauth-far-'));
    const remote = join(far, 'agent.sock');
    const mmauth = `${process.execPath} ${BIN}`;
    const index = new URL('../../dist/index.js', import.meta.url).href;
    // What the far side runs: nothing of the host's environment, the forwarded socket only.
    const prelude = `export HOME=${far}/home MMAUTH_CONFIG_DIR=${far}/config MMAUTH_AGENT_SOCK=${remote}; mkdir -p $HOME; unset MMAUTH_CLIENT_SECRET MMAUTH_PROFILE;`;
    const config = readConfig(configDir) as Json;
    // Stale for every clock: the first client's request renews, in the agent.
    config.profiles.work.token.expires_at = new Date(Date.now() + 2_000).toISOString();
    config.profiles.work.token.obtained_at = new Date(Date.now() - 7_198_000).toISOString();
    writeFileSync(join(configDir, 'config.json'), JSON.stringify(config), { mode: 0o600 });
    const before = refreshGrants(emulator);
    const script = [
      prelude,
      `for i in 1 2 3 4 5 6 7 8 9 10; do ${mmauth} token > ${far}/t.$i & done; wait;`,
      `cat ${far}/t.* | sort -u | wc -l;`,
      `${mmauth} token;`,
      `${mmauth} api /api/me > /dev/null && echo api-ok;`,
      `${mmauth} proxy --json > ${far}/proxy.json & P=$!; for i in $(seq 50); do test -s ${far}/proxy.json && break; sleep 0.2; done;`,
      `URL=$(sed 's/.*"url":"\\([^"]*\\)".*/\\1/' ${far}/proxy.json); curl -s -o /dev/null -w 'proxy-%{http_code}\\n' "$URL/api/me"; kill $P;`,
      `${process.execPath} --input-type=module -e "const { getToken } = await import('${index}'); console.log('library-' + (await getToken()).accessToken)";`,
      `${mmauth} token --profile other --json; echo "other-exit-$?";`,
      `test -e ${far}/config/config.json && echo config-written || echo config-empty;`,
    ].join(' ');
    const first = await overSsh(sshd, `${remote}:${socket}`, script, FORWARD_OPTIONS);
    const lines = first.stdout.trim().split('\n');
    const token = (readConfig(configDir) as Json).profiles.work.token.access_token as string;
    expect(lines[0]?.trim(), first.stderr).toBe('1');
    expect(lines[1]).toBe(token);
    expect(lines).toContain('api-ok');
    expect(lines).toContain('proxy-200');
    expect(lines).toContain(`library-${token}`);
    expect(first.stdout).toMatch(/"code": ?"profile_not_served"/);
    expect(lines).toContain('other-exit-4');
    expect(lines.at(-1)).toBe('config-empty');
    expect(refreshGrants(emulator) - before).toBe(1);
    expect(first.stdout).not.toContain(config.profiles.work.token.refresh_token);

    // Stopped where it runs: the far side's clients fail with the agent's own code.
    const stop = await overSsh(
      sshd,
      `${remote}:${socket}`,
      `${prelude} ${mmauth} agent --stop --json`,
      FORWARD_OPTIONS,
    );
    expect(JSON.parse(stop.stdout.trim()) as Json, stop.stderr).toMatchObject({ stopped: true });
    await new Promise((resolve) => setTimeout(resolve, 500));
    const after = await overSsh(
      sshd,
      `${remote}:${socket}`,
      `${prelude} for c in token header status; do ${mmauth} $c --json; echo "exit-$?"; done; ${mmauth} api /api/me; echo "exit-$?"`,
      FORWARD_OPTIONS,
    );
    expect(after.stdout.match(/exit-3/g)).toHaveLength(4);
    expect(after.stdout).toMatch(/"code": ?"agent_unreachable"/);
    rmSync(far, { recursive: true, force: true });
  }, 90_000);
});
