import { readFileSync } from 'node:fs';
import { CommanderError } from '@commander-js/extra-typings';
import { createContext, type AppContext } from './context.js';
import { CliError, ExitCode } from './errors.js';
import { buildProgram } from './program.js';

function readVersion(): string {
  try {
    const json: unknown = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
    return typeof json === 'object' && json !== null && 'version' in json && typeof json.version === 'string' ? json.version : '0.0.0';
  } catch {
    return '0.0.0';
  }
}

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

function flush(stream: NodeJS.WritableStream): Promise<void> {
  return new Promise((resolve) => stream.write('', () => resolve()));
}

/**
 * The process entry: builds the context, runs the command named in `argv` (process.argv shape),
 * maps any error to its exit code, flushes stdout and stderr, and exits. The only process.exit.
 * A first Ctrl-C aborts the running command (exit 130); a second one exits at once.
 */
export async function main(argv: string[]): Promise<never> {
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
    await buildProgram(ctx, readVersion()).parseAsync(argv);
  } catch (error) {
    exitCode = await report(error, ctx, isVerbose(argv, ctx.env));
  }
  await Promise.all([flush(process.stdout), flush(process.stderr)]);
  process.exit(exitCode);
}
