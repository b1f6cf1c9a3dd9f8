import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeScratchDir, startCli } from './cli.js';
import { until } from './until.js';

/**
 * A plain `mmauth exec` in `env` whose child reports its token file's path, then stays until the
 * test ends; resolves with that path and the token in it.
 */
export async function reportingExec(env: Record<string, string>): Promise<{ tokenFile: string; token: string }> {
  const reported = join(makeScratchDir('reporting-exec-', 0o755), 'token-file');
  startCli(
    [
      'exec',
      '--',
      'sh',
      '-c',
      `printf %s "$MMAUTH_TOKEN_FILE" > ${reported}.tmp; mv ${reported}.tmp ${reported}; sleep 60`,
    ],
    { env, timeoutMs: 60_000 },
  );
  await until(() => existsSync(reported), 20_000, 'the exec to start');
  const tokenFile = readFileSync(reported, 'utf8');
  await until(() => existsSync(tokenFile), 5_000, "the exec's token file");
  return { tokenFile, token: readFileSync(tokenFile, 'utf8').trim() };
}
