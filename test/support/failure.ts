import { exitCodeOf } from '../../src/exit-codes.js';
import { hintOf, type FailureContext } from '../../src/failure/failure-report.js';
import { isMmauthError, type MmauthError } from '../../src/errors.js';

/** The MmauthError `run` throws; fails the test when it returns or throws anything else. */
export function thrownBy(run: () => unknown): MmauthError {
  try {
    run();
  } catch (error) {
    if (isMmauthError(error)) return error;
    throw error;
  }
  throw new Error('expected an MmauthError, but nothing was thrown');
}

/** The MmauthError `run` rejects with; fails the test when it resolves or rejects with anything else. */
export async function rejectedBy(run: () => Promise<unknown>): Promise<MmauthError> {
  try {
    await run();
  } catch (error) {
    if (isMmauthError(error)) return error;
    throw error;
  }
  throw new Error('expected an MmauthError, but the promise resolved');
}

/** What a user sees of an error: its code, the exit code it maps to, and its message. */
export function failureOf(error: MmauthError): { code: string; exitCode: number; message: string } {
  return { code: error.code, exitCode: exitCodeOf(error), message: error.message };
}

/** The hint the failure map prints under `error` for a run of `context`. */
export function failureHintOf(error: MmauthError, context: Partial<FailureContext> = {}): string | undefined {
  return hintOf(error, { command: undefined, profileName: 'default', origin: undefined, ...context });
}
