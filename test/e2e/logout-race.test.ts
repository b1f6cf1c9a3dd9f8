/**
 * `logout` and `revoke` end the grant as it is when they finish, not as it was when they began
 * (decisions 68): against a real Doorkeeper 5.5 with 10-second tokens and a revocation endpoint
 * reached 6 s late (longer than the 5 s after which each renewer renews), another process keeps
 * renewing (a `mmauth token` loop, an `exec` keeper, the agent serving a client) while the end
 * runs; afterwards no token of the grant is live and no refresh token the server holds is honoured.
 */
import { describe, expect, it } from 'vitest';
import { startAgent, farSideEnv } from '../support/agent.js';
import { runCli, startCli } from '../support/cli.js';
import { readConfig } from '../support/emulator.js';
import { expectNoGrantLive, signedInThroughGate, tokenRequestsSeen } from '../support/gated-doorkeeper.js';
import { until } from '../support/until.js';

type Json = Record<string, any>;

/** Something that renews the profile's token while it runs, and how to stop it. */
interface Renewer {
  stop(): Promise<void>;
}

/** `mmauth token ARGS` run again and again until stopped. */
function tokenLoop(env: Record<string, string>, args: string[] = []): Renewer {
  let isStopped = false;
  const loop = (async () => {
    while (!isStopped) {
      await runCli(['token', ...args], { env, timeoutMs: 90_000 });
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
  })();
  return {
    stop: async () => {
      isStopped = true;
      await loop;
    },
  };
}

const RENEWERS: Record<string, (env: Record<string, string>) => Promise<Renewer>> = {
  // --min-ttl above the tokens' 10-s life: every call renews.
  'a `mmauth token` loop': async (env) => tokenLoop(env, ['--min-ttl', '7200']),
  'an `exec` keeping its child a token': async (env) => {
    const running = startCli(['exec', '--', 'sleep', '120'], { env, timeoutMs: 150_000 });
    return {
      stop: async () => {
        running.child.kill('SIGTERM');
        await running.done;
      },
    };
  },
  'the agent serving a client': async (env) => {
    const { agent, socket } = await startAgent(env, ['--profile', 'default']);
    const clients = tokenLoop(farSideEnv(socket));
    return {
      stop: async () => {
        await clients.stop();
        agent.child.kill('SIGTERM');
        await agent.done;
      },
    };
  },
};

describe('logout and revoke end the grant as it is when they finish', () => {
  it.each([
    ['logout', 'a `mmauth token` loop'],
    ['revoke', 'a `mmauth token` loop'],
    ['logout', 'an `exec` keeping its child a token'],
    ['logout', 'the agent serving a client'],
  ] as const)(
    '`mmauth %s` while %s renews, the revocation endpoint reached 6 s late: nothing of the grant stays live',
    async (command, renewerName) => {
      const { doorkeeper, gate, configDir, env } = await signedInThroughGate({ accessTokenExpiresInS: 10 });
      const renewer = await RENEWERS[renewerName]!(env);
      try {
        const seenAtStart = tokenRequestsSeen(gate);
        await until(() => tokenRequestsSeen(gate) > seenAtStart, 30_000, 'the renewer renewed once', 50);
        gate.set('POST /oauth2/revoke', { delayMs: 6_000 });
        const ended = await runCli([command, '--json'], { env, timeoutMs: 120_000 });
        expect(ended.code, ended.stderr).toBe(0);
        const report = JSON.parse(ended.stdout) as Json;
        expect(report.revoked).toBe(true);
        expect((readConfig(configDir) as Json).profiles.default.token).toBeUndefined();
      } finally {
        await renewer.stop();
      }
      console.log(JSON.stringify(await doorkeeper.tokens(), null, 0), gate.seen.join('\n'));
      await expectNoGrantLive(doorkeeper);
    },
    150_000,
  );
});
