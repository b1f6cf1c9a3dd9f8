import { CommanderError } from '@commander-js/extra-typings';
import { createContext, type AppContext } from './context.js';
import { chalkColours } from './ui/colours.js';
import { createPrompter } from './ui/prompts.js';
import { MmauthError } from './errors.js';
import { ExitCode } from './exit-codes.js';
import { describeFailure, type FailureContext, type FailureReport } from './failure/failure-report.js';
import { failureContextFor, type FailedRun } from './failure/failure-context.js';
import { conflictMessage } from './commands/conflicts.js';
import { isVerbose } from './settings/settings.js';
import { buildProgram, isCommandName } from './program.js';
import { isRenewing, renewalsSettled } from './grant/renewals-in-flight.js';
import { isClaimed } from './util/signal-claims.js';

/** Set by the build (esbuild `define`) to package.json's version; absent when run from tsc's output. */
declare const MMAUTH_VERSION: string | undefined;

/**
 * package.json's version, written into the bundle by the build: the launcher passes it to main()
 * without reading package.json (about 0.4 ms on every run, an earlier change).
 */
export const VERSION: string = typeof MMAUTH_VERSION === 'string' ? MMAUTH_VERSION : '0.0.0';

/** Whether commander ended the run by printing help or the version (exit 0, nothing to report). */
function isHelpOrVersion(error: unknown): boolean {
  return (
    error instanceof CommanderError && (error.code === 'commander.helpDisplayed' || error.code === 'commander.version')
  );
}

/**
 * Prints `error` for people on stderr and, with `isJson`, as one JSON document on stdout unless the
 * command already printed its own (README "Errors under --json"); returns the exit code.
 */
async function report(
  error: unknown,
  ctx: AppContext,
  context: FailureContext,
  flags: { isVerbose: boolean; isJson: boolean; isHelperForm?: boolean },
  argv: readonly string[] = [],
): Promise<number> {
  const out = await ctx.output();
  const printJson = (failure: FailureReport) => {
    if (!flags.isJson || out.hasPrintedJson) return;
    const { code, message, hint, exitCode, oauthError, status } = failure;
    out.json(
      {
        error: {
          code,
          message,
          hint: hint ?? null,
          exit_code: exitCode,
          ...(oauthError === undefined ? {} : { oauth_error: oauthError }),
          ...(status === undefined ? {} : { status }),
        },
      },
      { redact: true, isOnStderr: flags.isHelperForm === true },
    );
  };
  if (error instanceof CommanderError) {
    const conflict = error.code === 'commander.conflictingOption' ? conflictMessage(error.message) : undefined;
    if (conflict === undefined) {
      // Commander printed its message itself; under --json the document says it too.
      const message = error.message.replace(/^error:\s*/, '');
      // An unknown word without a suggestion: say where the list is (a typo already got "Did you mean").
      const isLost = error.code === 'commander.unknownCommand' && !/Did you mean/.test(error.message);
      // gh's spelling (`gh auth login`): mmauth's commands stand at the top.
      const isGhSpelling = isLost && argv.slice(2).find((word) => !word.startsWith('-')) === 'auth';
      // An option before the command (`mmauth --profile x token`): the commands own their options.
      const words = argv.slice(2);
      const command = words.find(isCommandName);
      const unknown = /unknown option '([^']+)'/.exec(error.message)?.[1];
      const isBeforeCommand =
        error.code === 'commander.unknownOption' &&
        !/Did you mean/.test(error.message) &&
        unknown !== undefined &&
        (command === undefined || words.indexOf(unknown) < words.indexOf(command));
      if (isGhSpelling)
        out.info("  mmauth's commands need no `auth`: mmauth login, mmauth status, mmauth token, mmauth logout");
      else if (isLost) out.info('  see `mmauth --help` for the commands');
      else if (isBeforeCommand)
        out.info(
          `  options go after the command: mmauth ${command ?? 'COMMAND'} ${unknown.split('=')[0]} … (mmauth ${command ?? 'COMMAND'} --help lists them)`,
        );
      printJson({
        code: 'usage',
        message,
        hint: isLost ? 'see `mmauth --help` for the commands' : undefined,
        exitCode: ExitCode.usage,
        oauthError: undefined,
        status: undefined,
      });
      return ExitCode.usage;
    }
    error = new MmauthError('conflicting_options', conflict);
  }
  if (ctx.signal.aborted || (error instanceof Error && error.name === 'ExitPromptError')) {
    out.error('interrupted');
    const interrupted = { code: 'interrupted', message: 'interrupted', exitCode: ExitCode.interrupted } as const;
    printJson({ ...interrupted, hint: undefined, oauthError: undefined, status: undefined });
    return ExitCode.interrupted;
  }
  const failure = describeFailure(error, context);
  // `header --json`'s stderr holds the error document alone: one document to parse.
  if (!(flags.isHelperForm === true && flags.isJson)) out.error(failure.message, failure.hint);
  printJson(failure);
  if (flags.isVerbose) {
    let cause: unknown = error;
    while (cause instanceof Error) {
      out.info(cause.stack ?? String(cause));
      cause = cause.cause;
    }
  }
  return failure.exitCode;
}

/**
 * The process entry: builds the context, runs the command named in `argv` (process.argv shape),
 * maps any error to its exit code (commands/shared/failure.ts), flushes stdout and stderr, and
 * exits: the only process.exit. `version` is package.json's. A first Ctrl-C (or SIGTERM, SIGHUP)
 * aborts the running command (exit 130, 143, 129); a second one exits at once unless a renewal is
 * under way. Before it exits, every renewal request sent is awaited (renewalsSettled).
 */
export async function main(argv: string[], version: string): Promise<never> {
  const interrupt = new AbortController();
  // A second Ctrl-C leaves at once, unless a renewal the server is answering is under way: its
  // pair is stored first (at most its budget), so that no grant is lost to an impatient key.
  process.on('SIGINT', () => {
    if (interrupt.signal.aborted && !isRenewing()) process.exit(ExitCode.interrupted);
    interrupt.abort();
  });
  // SIGTERM and SIGHUP end a command as Ctrl-C does, with their own exit code (128 + n), where the
  // command does not handle them itself (exec forwards them, the proxy and the agent stop on them).
  let signalledCode: number | undefined;
  for (const [name, code] of [
    ['SIGTERM', 143],
    ['SIGHUP', 129],
  ] as const) {
    process.on(name, () => {
      if (isClaimed(name)) return;
      if (signalledCode !== undefined && !isRenewing()) process.exit(signalledCode);
      signalledCode = code;
      interrupt.abort();
    });
  }
  // A command whose promise can no longer settle would otherwise end the process with exit 0.
  process.once('beforeExit', () => {
    process.stderr.write('error: internal failure: the command stopped before finishing (please report this)\n');
    process.exit(ExitCode.failure);
  });
  const launcher = process.argv[1];
  const ctx: AppContext = Object.assign(
    createContext(process, interrupt.signal, version, { prompter: createPrompter(process), colours: chalkColours }),
    launcher === undefined ? {} : { selfCommand: [process.execPath, ...process.execArgv, launcher] },
  );
  const run: FailedRun = { command: undefined, options: {} };
  let exitCode: number = ExitCode.ok;
  try {
    const program = buildProgram(ctx, version, argv).hook('preAction', (_, action) => {
      run.command = action.name();
      run.options = action.opts();
    });
    await program.parseAsync(argv);
    exitCode = ctx.requestedExitCode ?? exitCode;
  } catch (error) {
    // Help and version are printed, not failures: they need no failure context (which opens the store).
    if (!isHelpOrVersion(error)) {
      const context = await failureContextFor(run, ctx);
      // `api` prints the server's body, never a document of its own: it has no --json.
      const isJson = run.command !== 'api' && (run.options.json === true || argv.includes('--json'));
      exitCode = await report(
        error,
        ctx,
        context,
        {
          isVerbose: isVerbose({ verbose: argv.includes('--verbose') }, ctx.env),
          isJson,
          // `header --json`'s stdout is a header map: on failure it stays empty.
          isHelperForm: run.command === 'header',
        },
        argv,
      );
    }
  }
  if (signalledCode !== undefined) exitCode = signalledCode;
  await Promise.all([ctx.stdout.flush(), ctx.stderr.flush()]);
  // A renewal already sent is stored (or its grant ended) before the process goes, whatever ended the command.
  await renewalsSettled();
  process.exit(exitCode);
}
