import { CommanderError } from '@commander-js/extra-typings';
import { createContext, type AppContext } from './context.js';
import { MmauthError } from './errors.js';
import { describeFailure, ExitCode, type FailureContext } from './commands/shared/failure.js';
import { failureContextFor, type FailedRun } from './commands/shared/failure-context.js';
import { conflictMessage } from './commands/shared/conflicts.js';
import { isVerbose } from './commands/shared/settings.js';
import { buildProgram } from './program.js';

/** Prints `error` for people on stderr and returns the exit code (README "Exit codes"). */
async function report(
  error: unknown,
  ctx: AppContext,
  context: FailureContext,
  isVerboseRun: boolean,
): Promise<number> {
  if (error instanceof CommanderError) {
    if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version') return ExitCode.ok;
    const conflict = error.code === 'commander.conflictingOption' ? conflictMessage(error.message) : undefined;
    // Commander printed every other usage error itself.
    if (conflict === undefined) return ExitCode.usage;
    error = new MmauthError('conflicting_options', conflict);
  }
  const out = await ctx.output();
  if (ctx.signal.aborted || (error instanceof Error && error.name === 'ExitPromptError')) {
    out.error('interrupted');
    return ExitCode.interrupted;
  }
  const failure = describeFailure(error, context);
  out.error(failure.message, failure.hint);
  if (isVerboseRun) {
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
 * exits: the only process.exit. `version` is package.json's. A first Ctrl-C aborts the running
 * command (exit 130); a second one exits at once.
 */
export async function main(argv: string[], version: string): Promise<never> {
  const interrupt = new AbortController();
  process.on('SIGINT', () => {
    if (interrupt.signal.aborted) process.exit(ExitCode.interrupted);
    interrupt.abort();
  });
  // A command whose promise can no longer settle would otherwise end the process with exit 0.
  process.once('beforeExit', () => {
    process.stderr.write('error: internal failure: the command stopped before finishing (please report this)\n');
    process.exit(ExitCode.failure);
  });
  const ctx = createContext(process, interrupt.signal, version);
  const run: FailedRun = { command: undefined, options: {} };
  let exitCode: number = ExitCode.ok;
  try {
    const program = buildProgram(ctx, version).hook('preAction', (_, action) => {
      run.command = action.name();
      run.options = action.opts();
    });
    await program.parseAsync(argv);
  } catch (error) {
    const context = await failureContextFor(run, ctx);
    exitCode = await report(error, ctx, context, isVerbose({ verbose: argv.includes('--verbose') }, ctx.env));
  }
  await Promise.all([ctx.stdout.flush(), ctx.stderr.flush()]);
  process.exit(exitCode);
}
