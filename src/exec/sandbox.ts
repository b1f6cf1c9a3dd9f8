import { existsSync, realpathSync } from 'node:fs';
import { join } from 'node:path';

/**
 * What `exec --sandbox`'s child may read, write and reach: mmauth's policy, stated here in one
 * place; how it is enforced is the engine's (sandbox-engine.ts). Paths are real paths (links
 * resolved: a symlinked HOME or config directory is mapped where it really is).
 */
export interface SandboxPolicy {
  /** Where the child may write: the working directory, its private temp dir, each --allow-write. */
  allowWrite: string[];
  /** Never written even there (beside the engine's own mandatory denies): what runs later (each `.mmauth-profile` among it). */
  denyWrite: string[];
  /** Unreadable: the config directories, the keyring's files, mmauth's runtime directories, --deny-read. */
  denyRead: string[];
  /** Readable again inside what denyRead hides: this run's own directories (its token file's, its proxy's). */
  allowRead: string[];
  /** Egress, as `host:port` (or a bare host, any port): the mode's own endpoints and each --allow-host. */
  allowHosts: string[];
  /** The child's private temp dir (TMPDIR), removed after it exits. */
  tmpDir: string;
  /** Where the engine will make placeholders in the working directory (absolute): removed by the watchdog after a kill. */
  placeholders?: string[];
}

/** The variables `--sandbox` takes out of the child's environment. */
export const SANDBOX_UNSET_ENV = [
  'MMAUTH_CONFIG_DIR',
  'MMAUTH_CLIENT_SECRET',
  'DBUS_SESSION_BUS_ADDRESS',
  'MMAUTH_AGENT_SOCK',
  'SSH_AUTH_SOCK',
];

/** A variable whose name says it holds a secret: TOKEN, SECRET, KEY, PASSWORD or CREDENTIAL, any case. */
const SECRET_NAME = /TOKEN|SECRET|KEY|PASSWORD|CREDENTIAL/i;

/**
 * The variables of `env` a sandboxed child does not get: every one whose name
 * looks secret (SECRET_NAME) but those `passEnv` names (`--pass-env`); mmauth's own for the child
 * are added after and never held back. Sorted, for `--verbose`.
 */
export function heldBackVariables(env: NodeJS.ProcessEnv, passEnv: readonly string[]): string[] {
  return Object.keys(env)
    .filter((name) => SECRET_NAME.test(name) && !passEnv.includes(name))
    .sort();
}

/** Whether an --allow-host entry names every host or loopback (walls are never opened by a pattern). */
export function isOpeningHost(entry: string): boolean {
  const host = entry.replace(/:\d+$/, '').toLowerCase().replace(/\.$/, '');
  if (/^[*.]+$/.test(host)) return true;
  if (host === 'localhost' || host.endsWith('.localhost') || host === '0.0.0.0' || host === '0') return true;
  return /^127(\.|$)/.test(host) || /^\*\.\d/.test(host);
}

/** Whether `inner` is `outer` or lies below it (both real, absolute paths). */
export function isWithin(inner: string, outer: string): boolean {
  return inner === outer || inner.startsWith(outer.endsWith('/') ? outer : `${outer}/`);
}

/** The real path of `path`, or `path` itself when it does not exist (yet). */
export function realPath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/**
 * The egress entry (`host:port`) for `url`'s origin: the port given, or the scheme's (443, 80).
 * Undefined for what is no http(s) URL.
 */
export function egressOf(url: string): string | undefined {
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return undefined;
    const port = parsed.port === '' ? (parsed.protocol === 'https:' ? '443' : '80') : parsed.port;
    return `${parsed.hostname}:${port}`;
  } catch {
    return undefined;
  }
}

/** Whether `entry` is an --allow-host value: a host name or IPv4 address, and an optional port. */
export function isHostEntry(entry: string): boolean {
  const match = /^([A-Za-z0-9*]([A-Za-z0-9.*-]*[A-Za-z0-9])?)(:(\d{1,5}))?$/.exec(entry);
  if (match === null) return false;
  return match[4] === undefined || (Number(match[4]) > 0 && Number(match[4]) < 65_536);
}

/** The keyring's files under `home`, where the desktop keyrings keep them (denied whether or not they exist). */
export function keyringPaths(home: string): string[] {
  return [
    join(home, '.local', 'share', 'keyrings'),
    join(home, '.local', 'share', 'kwalletd'),
    join(home, 'Library', 'Keychains'),
  ];
}

/** What sandboxPolicy is built from. */
export interface SandboxPolicyInput {
  cwd: string;
  tmpDir: string;
  /** The config directories: the one in use and the default one. */
  configDirs: string[];
  home: string | undefined;
  /** mmauth's runtime directories on this machine (agents', and the roots of every run's private directory). */
  runtimeDirs: string[];
  /** This run's own directories in them, left readable (the temp dir is left writable). */
  ownDirs: string[];
  allowWrite: string[];
  denyRead: string[];
  /** The mode's endpoints (URLs) and --allow-host entries. */
  egressUrls: string[];
  allowHosts: string[];
  /** What runs later and exists in the writable roots (scanRunsLater): never written. */
  walled?: string[];
  /** The engine's placeholders this run will make (enginePlaceholders), absolute. */
  placeholders?: string[];
}

/**
 * The policy of one `exec --sandbox` run (SandboxPolicy): every path made real, duplicates
 * dropped; egress to the mode's endpoints' origins and the --allow-host entries, nothing else.
 */
export function sandboxPolicy(input: SandboxPolicyInput): SandboxPolicy {
  const unique = (paths: string[]) => [...new Set(paths.map(realPath))];
  const allowWrite = unique([input.cwd, input.tmpDir, ...input.allowWrite]);
  return {
    allowWrite,
    // Only files that exist: a mount point for an absent one would be made on the host, where every
    // mmauth run in that directory would meet an empty directory file while the child runs. A new
    // one the child plants counts only once approved (mmauth profile trust), and is moved aside
    // after the run. Existing ones at any depth are among `walled` (the scan found them): no glob,
    // which the engine would expand by searching every writable root whole as the sandbox starts.
    denyWrite: [
      ...allowWrite.flatMap((root) =>
        existsSync(join(root, '.mmauth-profile')) ? [join(root, '.mmauth-profile')] : [],
      ),
      ...new Set(input.walled ?? []),
    ],
    denyRead: unique([
      ...input.configDirs,
      ...(input.home === undefined ? [] : keyringPaths(input.home)),
      ...input.runtimeDirs,
      ...input.denyRead,
    ]),
    allowRead: unique(input.ownDirs),
    allowHosts: [...new Set([...input.egressUrls.flatMap((url) => egressOf(url) ?? []), ...input.allowHosts])],
    tmpDir: realPath(input.tmpDir),
    placeholders: input.placeholders ?? [],
  };
}
