// A hostile program of the same user under `mmauth exec` (test/e2e/attacks-sandbox-walls.test.ts).
// It tries every route out of `exec --sandbox` the attack run found and prints one JSON line: for
// each route, whether it got through. argv[2]: a JSON object of what to try (paths, ports, sockets).
// It only reports what it reached; it uses no token it finds.
import { spawnSync } from 'node:child_process';
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';

const targets = JSON.parse(process.argv[2] ?? '{}');
const got = {};
// A bus that cannot be reached fails several of dbus-next's promises at once: each is an answer, not a crash.
process.on('unhandledRejection', () => undefined);

const tryWrite = (path, text, append = false) => {
  try {
    mkdirSync(join(path, '..'), { recursive: true });
    (append ? appendFileSync : writeFileSync)(path, text);
    return true;
  } catch {
    return false;
  }
};
const tryRead = (path) => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
};

/** A GET of `path` to 127.0.0.1:`port`, or over the Unix socket `socketPath`: the status, or 0. */
const get = (where, path, headers = {}) =>
  new Promise((done) => {
    const req = request({ ...where, path, headers, agent: false, timeout: 3000 }, (res) => {
      res.resume();
      done(res.statusCode ?? 0);
    });
    req.on('error', () => done(0));
    req.on('timeout', () => req.destroy());
    req.end();
  });

/** The same GET through the HTTP proxy the environment names (as curl would use it), or 0. */
const viaProxy = (port, path, headers = {}) => {
  const proxy = process.env.http_proxy ?? process.env.HTTP_PROXY;
  if (proxy === undefined) return Promise.resolve(0);
  const url = new URL(proxy);
  const auth =
    url.username === ''
      ? {}
      : {
          'proxy-authorization': `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}`,
        };
  return get({ host: url.hostname, port: Number(url.port) }, `http://127.0.0.1:${port}${path}`, {
    ...auth,
    ...headers,
  });
};

/** Whether 127.0.0.1:`port` answers `path` with 200, directly or through the proxy. */
const reaches = async (port, path, headers = {}) =>
  (await get({ host: '127.0.0.1', port }, path, headers)) === 200 || (await viaProxy(port, path, headers)) === 200;

/** Whether a connection to the Unix socket `path` (a leading NUL: abstract) is accepted. */
const opens = (path) =>
  new Promise((done) => {
    const socket = connect({ path });
    socket.once('connect', () => {
      socket.destroy();
      done(true);
    });
    socket.once('error', () => done(false));
  });

// The terminal: push a line into the terminal's input; the user's shell would run it after we exit.
if (targets.injectLine !== undefined) {
  const python = `import fcntl, termios, sys\nfor c in sys.argv[1]:\n    fcntl.ioctl(0, termios.TIOCSTI, c.encode())`;
  got.tiocsti =
    spawnSync('python3', ['-c', python, `${targets.injectLine}\n`], { stdio: ['inherit', 'ignore', 'ignore'] })
      .status === 0;
}
// Files the user runs later.
const home = targets.home;
got.bashrc = tryWrite(join(home, '.bashrc'), '\necho planted\n', true);
got.profile = tryWrite(join(home, '.profile'), '\necho planted\n', true);
got.localBin = tryWrite(join(home, '.local', 'bin', 'git'), '#!/bin/sh\necho planted\n');
got.hook = tryWrite(join(targets.repo, '.git', 'hooks', 'pre-commit'), '#!/bin/sh\necho planted\n');
got.gitConfig = tryWrite(join(targets.repo, '.git', 'config'), '\n[core]\n\thooksPath = /tmp\n', true);
got.directoryFile = tryWrite(join(targets.repo, '.mmauth-profile'), 'attacker\n');
// The grant: the config directory and the keyring over the session bus.
got.config = tryRead(join(targets.configDir, 'config.json')) !== undefined;
got.keyringSecrets = 0;
if (targets.busAddress !== undefined) {
  try {
    const dbus = await import('dbus-next');
    const bus = dbus.sessionBus({ busAddress: targets.busAddress });
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
  } catch {
    // Out of reach: as it should be.
  }
}
// Other mmauth processes of the user.
got.agent =
  targets.agentSocket === undefined ? false : (await get({ socketPath: targets.agentSocket }, '/v1/token')) === 200;
got.otherTokenFile = targets.otherTokenFile === undefined ? false : tryRead(targets.otherTokenFile) !== undefined;
got.otherEndpointTcp =
  targets.otherEndpointPort === undefined
    ? false
    : await reaches(targets.otherEndpointPort, '/token', { authorization: targets.otherEndpointAuthorization });
got.otherEndpointSocket =
  targets.otherEndpointSocket === undefined
    ? false
    : (await get({ socketPath: targets.otherEndpointSocket }, '/token', {
        authorization: targets.otherEndpointAuthorization,
      })) === 200;
got.otherProxySocket =
  targets.otherProxySocket === undefined
    ? false
    : (await get({ socketPath: targets.otherProxySocket }, '/api/me')) === 200;
got.otherProxyTcp = targets.otherProxyPort === undefined ? false : await reaches(targets.otherProxyPort, '/api/me');
// Anything else on loopback, and an abstract socket.
got.collector = targets.collectorPort === undefined ? false : await reaches(targets.collectorPort, '/collect');
got.abstract = targets.abstractName === undefined ? false : await opens(`\0${targets.abstractName}`);
// What it may do: write under the working directory, a temp file, an --allow-write directory.
got.build = tryWrite(join(process.cwd(), 'build', 'out.txt'), 'built\n');
got.tmp = tryWrite(join(process.env.TMPDIR ?? '/tmp', `scratch-${process.pid}`), 'tmp\n');
got.allowed = targets.allowedDir === undefined ? false : tryWrite(join(targets.allowedDir, 'out.txt'), 'allowed\n');
// The API it is meant to reach: with its token, or through its proxy.
if (targets.apiPort !== undefined) {
  const token = process.env.MMAUTH_TOKEN;
  got.api = await reaches(targets.apiPort, '/api/me', token === undefined ? {} : { authorization: `Bearer ${token}` });
}
if (process.env.MMAUTH_API_URL !== undefined)
  got.apiViaProxy = await reaches(
    Number(new URL(process.env.MMAUTH_API_URL).port),
    `${new URL(process.env.MMAUTH_API_URL).pathname.replace(/\/$/, '')}/api/me`,
  );
console.log(JSON.stringify(got));
process.exit(0);
