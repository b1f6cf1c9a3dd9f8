/** Whether `env` says this runs under CI (`CI` set, and not `false` or `0`): no person to prompt or to open a browser for. */
export function isCi(env: NodeJS.ProcessEnv): boolean {
  const ci = (env.CI ?? '').toLowerCase();
  return ci !== '' && ci !== 'false' && ci !== '0';
}
