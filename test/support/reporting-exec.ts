import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeScratchDir, startCli } from './cli.js';
import { until } from './until.js';

/**
 * A `mmauth exec ARGS` in `env` whose child reports its variable `variable`, then stays until the
 * test ends; resolves with the value reported.
 */
export async function reportedVariable(
  env: Record<string, string>,
  variable: string,
  args: readonly string[] = [],
): Promise<string> {
  const reported = join(makeScratchDir('reporting-exec-', 0o755), 'reported');
  const script = `printf %s "$${variable}" > ${reported}.tmp; mv ${reported}.tmp ${reported}; sleep 60`;
  startCli(['exec', ...args, '--', 'sh', '-c', script], { env, timeoutMs: 60_000 });
  await until(() => existsSync(reported), 20_000, 'the exec to start');
  return readFileSync(reported, 'utf8');
}

/**
 * A plain `mmauth exec` in `env` whose child reports its token file's path, then stays until the
 * test ends; resolves with that path and the token in it.
 */
export async function reportingExec(env: Record<string, string>): Promise<{ tokenFile: string; token: string }> {
  const tokenFile = await reportedVariable(env, 'MMAUTH_TOKEN_FILE');
  await until(() => existsSync(tokenFile), 5_000, "the exec's token file");
  return { tokenFile, token: readFileSync(tokenFile, 'utf8').trim() };
}
