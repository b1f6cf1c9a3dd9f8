import { CommanderError } from '@commander-js/extra-typings';
import { createContext, type AppContext } from './context.js';
import { CliError, ExitCode } from './errors.js';
import { buildProgram } from './program.js';

function isVerbose(argv: readonly string[], env: NodeJS.ProcessEnv): boolean {
  return argv.includes('--verbose') || env.MMAUTH_DEBUG === '1';
}

/** Prints `error` for people on stderr and returns the exit code (README "Exit codes"). */
async function report(error: unknown, ctx: AppContext, isVerboseRun: boolean): Promise<number> {
  if (error instanceof CommanderError) {
    // Commander already printed its message (or the help/version text).
    return error.code === 'commander.helpDisplayed' || error.code === 'commander.version' ? ExitCode.ok : ExitCode.usage;
  }
  const out = await ctx.output();
  if (ctx.signal.aborted || (error instanceof Error && error.name === 'ExitPromptError')) {
    out.error('interrupted');
    return ExitCode.interrupted;
  }
  if (error instanceof CliError) {
    out.error(error.message, error.hint);
  } else {
    out.error(`unexpected failure: ${error instanceof Error ? error.message : String(error)}`, 'run again with --verbose for details');
  }
  if (isVerboseRun) {
    let cause: unknown = error;
    while (cause instanceof Error) {
      out.info(cause.stack ?? String(cause));
      cause = cause.cause;
    }
  }
  return error instanceof CliError ? error.exitCode : ExitCode.failure;
}

/**
 * The process entry: builds the context, runs the command named in `argv` (process.argv shape),
 * maps any error to its exit code, flushes stdout and stderr, and exits. The only process.exit.
 * `version` is package.json's, which the launcher reads. A first Ctrl-C aborts the running
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
  const ctx = createContext(process, interrupt.signal);
  let exitCode: number = ExitCode.ok;
  try {
    await buildProgram(ctx, version).parseAsync(argv);
  } catch (error) {
    exitCode = await report(error, ctx, isVerbose(argv, ctx.env));
  }
  await Promise.all([ctx.stdout.flush(), ctx.stderr.flush()]);
  process.exit(exitCode);
}
