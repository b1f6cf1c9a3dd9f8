import { isCi } from '../util/ci.js';

/** What became of an attempt to show the authorization URL in a browser. */
export type BrowserOutcome =
  | {
      isOpened: true;
      via: string;
      /** A BROWSER command's exit code when it ends (null: killed), for a command that fails at once. */
      exited?: Promise<number | null>;
    }
  | { isOpened: false; reason: string };

/** Opens URLs in the user's browser. */
export interface BrowserLauncher {
  /** Opens `url`; never throws: a failure is an outcome with a reason to print. */
  open(url: string): Promise<BrowserOutcome>;
}

/**
 * Splits a BROWSER value into words the way a POSIX shell would for a simple command: white space
 * separates, single and double quotes group, backslash escapes. No expansion of any kind.
 */
export function splitCommandLine(command: string): string[] {
  const words: string[] = [];
  let word = '';
  let hasWord = false;
  let quote: '"' | "'" | undefined;
  for (let i = 0; i < command.length; i++) {
    const c = command.charAt(i);
    if (quote === "'") {
      if (c === "'") quote = undefined;
      else word += c;
    } else if (c === '\\' && i + 1 < command.length && quote === undefined) {
      word += command.charAt(++i);
      hasWord = true;
    } else if (quote === '"') {
      if (c === '"') quote = undefined;
      else if (c === '\\' && /["\\$`]/.test(command.charAt(i + 1))) word += command.charAt(++i);
      else word += c;
    } else if (c === '"' || c === "'") {
      quote = c;
      hasWord = true;
    } else if (/\s/.test(c)) {
      if (hasWord) words.push(word);
      word = '';
      hasWord = false;
    } else {
      word += c;
      hasWord = true;
    }
  }
  if (hasWord) words.push(word);
  return words;
}

/** Whether this is an SSH session: SSH_CONNECTION, SSH_CLIENT or SSH_TTY is set. */
export function isSshSession(env: NodeJS.ProcessEnv): boolean {
  return Boolean(env.SSH_CONNECTION || env.SSH_CLIENT || env.SSH_TTY);
}

/**
 * Why no browser should be opened automatically, or undefined when one may be: `CI` set, an SSH
 * session (SSH_CONNECTION, SSH_CLIENT, SSH_TTY), or Linux without DISPLAY/WAYLAND_DISPLAY.
 * Not consulted when BROWSER is set.
 */
export function reasonNotToOpen(env: NodeJS.ProcessEnv, platform: NodeJS.Platform): string | undefined {
  if (isCi(env)) return 'CI is set';
  if (isSshSession(env)) return 'this is an SSH session';
  if (platform === 'linux' && !env.DISPLAY && !env.WAYLAND_DISPLAY)
    return 'there is no display (DISPLAY/WAYLAND_DISPLAY unset)';
  return undefined;
}

/** mmauth's secrets in the environment, which a long-lived browser must never inherit. */
const SECRET_VARIABLES = ['MMAUTH_CLIENT_SECRET', 'MMAUTH_TOKEN'];

/** `env` without mmauth's secrets: the environment a browser starts with. */
export function browserEnvironment(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const copy = { ...env };
  for (const name of SECRET_VARIABLES) delete copy[name];
  return copy;
}

/**
 * Runs `start` with mmauth's secrets removed from process.env (the `open` package spawns its
 * helper with the process's own environment), and puts them back afterwards.
 */
async function withoutSecretsInProcessEnv<T>(start: () => Promise<T>): Promise<T> {
  const saved = SECRET_VARIABLES.map((name) => [name, process.env[name]] as const);
  for (const name of SECRET_VARIABLES) delete process.env[name];
  try {
    return await start();
  } finally {
    for (const [name, value] of saved) if (value !== undefined) process.env[name] = value;
  }
}

/**
 * The launcher: with BROWSER set, runs that command (split into words, no shell) with the URL as
 * its last argument; otherwise, unless reasonNotToOpen says so, the `open` package (loaded on use).
 * `isVerbose` lets the browser command's stderr through. The browser never sees mmauth's secrets.
 */
export function createBrowserLauncher(
  env: NodeJS.ProcessEnv,
  platform: NodeJS.Platform,
  isVerbose: boolean,
): BrowserLauncher {
  return {
    async open(url) {
      const browser = env.BROWSER?.trim();
      if (browser) {
        const [command, ...args] = splitCommandLine(browser);
        if (command === undefined) {
          return { isOpened: false, reason: 'BROWSER is empty' };
        }
        // Loaded here: node:child_process costs about 3 ms, which only login needs.
        const { spawn } = await import('node:child_process');
        return new Promise<BrowserOutcome>((resolve) => {
          const child = spawn(command, [...args, url], {
            env: browserEnvironment(env),
            stdio: ['ignore', 'ignore', isVerbose ? 'inherit' : 'ignore'],
            detached: platform !== 'win32',
          });
          child.once('error', (error) =>
            resolve({ isOpened: false, reason: `BROWSER command failed to start: ${error.message}` }),
          );
          const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
          child.once('spawn', () => {
            child.unref();
            resolve({ isOpened: true, via: `BROWSER (${command})`, exited });
          });
        });
      }
      const reason = reasonNotToOpen(env, platform);
      if (reason !== undefined) {
        return { isOpened: false, reason };
      }
      try {
        await openSystemBrowser(url);
        return { isOpened: true, via: 'the system browser' };
      } catch (error) {
        return {
          isOpened: false,
          reason: `could not open a browser: ${error instanceof Error ? error.message : String(error)}`,
        };
      }
    },
  };
}

/**
 * Asks the system to open `url` in the default browser (the `open` package, loaded here on first
 * use: xdg-open, `open`, `start`), without mmauth's secrets in the opener's environment; resolves
 * once the opener started, not when a browser shows. Throws what `open` throws.
 */
export async function openSystemBrowser(url: string): Promise<void> {
  const { default: open } = await import('open');
  const child = await withoutSecretsInProcessEnv(() => open(url));
  child.once('error', () => undefined);
  child.unref();
}
