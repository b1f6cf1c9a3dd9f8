import { Command } from '@commander-js/extra-typings';
import { registerApi } from './commands/api/api.js';
import { registerClientCredentials } from './commands/client-credentials.js';
import { registerCompletion } from './commands/completion.js';
import { registerDoctor } from './commands/doctor/doctor.js';
import { registerEmulator } from './commands/emulator.js';
import { registerExec } from './commands/exec.js';
import { registerProxy } from './commands/proxy.js';
import { registerAgent } from './commands/agent.js';
import { registerHeader } from './commands/header.js';
import { registerInfo } from './commands/info.js';
import { registerLogin } from './commands/login/login.js';
import { registerLogout } from './commands/logout.js';
import { registerProfile } from './commands/profile.js';
import { registerRefresh } from './commands/refresh.js';
import { registerRevoke } from './commands/revoke.js';
import { registerStatus } from './commands/status.js';
import { registerToken } from './commands/token.js';
import type { AppContext } from './context.js';
import { conflictMessage } from './commands/conflicts.js';
import { noteLocalOnly } from './commands/local-only-notice.js';

/** Each command's register call, in the order `mmauth --help` lists them. */
const COMMANDS: ReadonlyArray<[string, (program: Command, ctx: AppContext) => void]> = [
  ['login', registerLogin],
  ['client-credentials', registerClientCredentials],
  ['info', registerInfo],
  ['revoke', registerRevoke],
  ['token', registerToken],
  ['refresh', registerRefresh],
  ['api', registerApi],
  ['exec', registerExec],
  ['proxy', registerProxy],
  ['agent', registerAgent],
  ['header', registerHeader],
  ['status', registerStatus],
  ['logout', registerLogout],
  ['profile', registerProfile],
  ['doctor', registerDoctor],
  ['emulator', registerEmulator],
  ['completion', registerCompletion],
];

/** Whether `word` names one of mmauth's commands. */
export function isCommandName(word: string): boolean {
  return COMMANDS.some(([name]) => name === word);
}

/**
 * The one command `argv` (process.argv shape) runs, when it names one outright as its first word
 * (`mmauth token --json`); undefined for anything else (global help or version, `help`, an unknown
 * word, `completion`, which describes every command), which needs them all.
 */
function commandToRun(argv: readonly string[] | undefined): string | undefined {
  const first = argv?.[2];
  if (first === undefined || first === 'completion') return undefined;
  return COMMANDS.some(([name]) => name === first) ? first : undefined;
}

/**
 * Builds the commander program: global help and version, one register call per command, no
 * logic. Commander never exits the process itself (exitOverride); cli.ts maps its errors. Given
 * the `argv` about to be parsed, and when it names its command outright, only that command is
 * registered: the fourteen others cost about 1.5 ms of start-up, which `token` in a loop pays.
 */
/** Where the docs of this installation are: beside bin/ (a clone, or `npm install -g`'s package directory). */
function docsDir(): string {
  const launcher = process.argv[1];
  if (launcher === undefined) return 'docs/ of the mmauth package';
  try {
    const { realpathSync } = require('node:fs') as typeof import('node:fs');
    return `${realpathSync(launcher).replace(/[\\/]bin[\\/][^\\/]+$/, '')}/docs`;
  } catch {
    return 'docs/ of the mmauth package';
  }
}

export function buildProgram(ctx: AppContext, version: string, argv?: readonly string[]): Command {
  // `--version --json`: a document, as every --json output is.
  const isJsonVersion = argv?.includes('--json') === true && (argv.includes('--version') || argv.includes('-V'));
  const program = new Command('mmauth')
    .description("Obtain, inspect and revoke OAuth 2.0 tokens for the mind-mapping service's HTTP API.")
    .version(isJsonVersion ? JSON.stringify({ schema_version: 1, version }) : version, '-V, --version')
    // -V and --help of the program only before the command: after it, `--client-id -Vm9n…` is a value.
    .enablePositionalOptions()
    .exitOverride()
    .showSuggestionAfterError()
    .configureOutput({
      writeOut: (text) => ctx.stdout.write(text),
      writeErr: (text) => ctx.stderr.write(text),
      // Conflicting options are reported by cli.ts in mmauth's own words.
      outputError: (text, write) => {
        if (conflictMessage(text) === undefined) write(text);
      },
      // Asked of our writers, not process.stdout/stderr, whose streams cost about 3 ms to create.
      getOutHelpWidth: () => ctx.stdout.columns ?? 80,
      getErrHelpWidth: () => ctx.stderr.columns ?? 80,
      getOutHasColors: () => false,
      getErrHasColors: () => false,
    })
    .addHelpText(
      'after',
      // A function: the docs' directory is looked up only when help is shown.
      () => `
Examples:
  $ mmauth emulator                                   # a local copy of the service's OAuth interface
  $ mmauth login --base-url http://127.0.0.1:4010 --client-id mmauth-public   # the emulator's public client
  $ mmauth info
  $ mmauth client-credentials --no-save --json
  $ mmauth revoke

Exit codes: 0 ok, 1 error, 2 usage, 3 network/timeout, 4 authentication/authorization, 130 interrupted.

More in the package's docs/ (${docsDir()}):
  commands.md            every command and option
  profiles.md            profiles, directory files, where credentials are kept
  exec-and-programs.md   tokens for programs (each good until the next renewal; on a 401 ask
                         again), exec, the proxy, exec --sandbox
  agent.md               tokens in containers, on remote hosts, in sandboxes (mmauth agent)
  helper-contract.md     mmauth as another tool's token command (--deadline, --verify)
  library.md             getToken, login and logout for Node programs
  json-and-exit-codes.md --json documents, error codes, exit codes
  security.md            what mmauth holds against whom
  development.md         building, testing, benchmarks`,
    );
  // Under --json, stderr carries warnings and errors only; `api` has no --json.
  program.hook('preAction', async (_, action) => {
    if (action.opts().json === true) (await ctx.output()).setJsonRun();
    await noteLocalOnly(action.parent?.parent === null ? action.name() : (action.parent?.name() ?? action.name()), ctx);
  });
  const only = commandToRun(argv);
  for (const [name, register] of COMMANDS) {
    if (only === undefined || name === only) register(program, ctx);
  }
  return program;
}
