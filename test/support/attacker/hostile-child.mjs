// A hostile program of the same user, run by `mmauth exec` (test/e2e/attacks-sandbox.test.ts). It
// tries every route to the grant the attack run found and prints one JSON line of what it got:
// argv[2] the config directory's path, argv[3] the session bus address, argv[4] the client secret
// to look for (the test's: to report a find, never to use it).
import { existsSync, readdirSync, readFileSync, openSync, readSync, closeSync } from 'node:fs';
import { dirname, join } from 'node:path';

const [configDir, busAddress, secret] = process.argv.slice(2);
// A bus that cannot be reached fails several of dbus-next's promises at once: each is an answer, not a crash.
process.on('unhandledRejection', () => undefined);
const got = {};
const tryRead = (path) => {
  try {
    return readFileSync(path, 'latin1');
  } catch {
    return undefined;
  }
};
got.configByPath = tryRead(join(configDir, 'config.json')) !== undefined;
got.configByEnv =
  process.env.MMAUTH_CONFIG_DIR !== undefined &&
  tryRead(join(process.env.MMAUTH_CONFIG_DIR, 'config.json')) !== undefined;
got.secretInEnv = JSON.stringify(process.env).includes(secret);
// Every process's environment this child can read: mmauth's, its parent's.
got.secretInProcEnviron = false;
got.mmauthMem = false;
for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
  if (tryRead(`/proc/${pid}/environ`)?.includes(secret) === true) got.secretInProcEnviron = true;
  const cmdline = tryRead(`/proc/${pid}/cmdline`) ?? '';
  if (cmdline.includes('mmauth.cjs') && Number(pid) !== process.pid) {
    try {
      const fd = openSync(`/proc/${pid}/mem`, 'r');
      const maps = tryRead(`/proc/${pid}/maps`) ?? '';
      const start = Number.parseInt(maps.split('-')[0] ?? '0', 16);
      const bytes = Buffer.alloc(16);
      got.mmauthMem = readSync(fd, bytes, 0, 16, start) > 0;
      closeSync(fd);
    } catch {
      // Not readable: as it should be.
    }
  }
}
// exec's private directory: what else is in it beside the child's token.
got.privateDir = process.env.MMAUTH_TOKEN_FILE === undefined ? [] : readdirSync(dirname(process.env.MMAUTH_TOKEN_FILE));
// The keyring over the session bus: every secret the Secret Service hands out.
got.keyringSecrets = 0;
try {
  const dbus = await import('dbus-next');
  const bus = dbus.sessionBus({ busAddress });
  const failed = new Promise((_, reject) => bus.on('error', reject));
  const timeout = new Promise((_, reject) => setTimeout(() => reject(new Error('timeout')), 3000));
  const service = await Promise.race([
    bus.getProxyObject('org.freedesktop.secrets', '/org/freedesktop/secrets'),
    timeout,
  ]);
  const api = service.getInterface('org.freedesktop.Secret.Service');
  const [, session] = await api.OpenSession('plain', new dbus.Variant('s', ''));
  const [unlocked] = await api.SearchItems({});
  const secrets = await api.GetSecrets(unlocked, session);
  got.keyringSecrets = Object.values(secrets).filter(([, , value]) => value.length > 0).length;
  bus.disconnect();
} catch (error) {
  got.keyringError = String(error?.message ?? error).slice(0, 80);
}
got.configDirExists = existsSync(configDir);
console.log(JSON.stringify(got));
process.exit(0);
