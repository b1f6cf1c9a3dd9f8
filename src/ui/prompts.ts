import { UsageError } from '../errors.js';

/** Streams and environment a prompt needs to decide whether it may ask. */
export interface PromptEnvironment {
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
}

/** Asks the user for what is missing. The only importer of inquirer. */
export interface Prompter {
  /** Whether prompting is allowed: stdin and stderr are TTYs and CI is not set. */
  readonly canPrompt: boolean;
  /**
   * Asks for a secret with a masked prompt on stderr. Throws UsageError (exit 2) naming `alternatives`
   * when prompting is not allowed, InterruptedError-worthy errors propagate as thrown by inquirer.
   */
  secret(message: string, alternatives: string): Promise<string>;
}

/** Whether CI is set the way CI systems set it (`CI=true`, `CI=1`). */
export function isCi(env: NodeJS.ProcessEnv): boolean {
  const ci = (env.CI ?? '').toLowerCase();
  return ci !== '' && ci !== 'false' && ci !== '0';
}

/** Creates the Prompter over the given streams; @inquirer/* load only when a prompt is shown. */
export function createPrompter(io: PromptEnvironment): Prompter {
  const canPrompt = io.stdin.isTTY === true && io.stderr.isTTY === true && !isCi(io.env);
  return {
    canPrompt,
    async secret(message, alternatives) {
      if (!canPrompt) {
        throw new UsageError(`${message.replace(/:$/, '')} is needed and there is no terminal to ask on`, { hint: `provide it with ${alternatives}` });
      }
      const { default: password } = await import('@inquirer/password');
      return password({ message, mask: '*', validate: (value) => value !== '' || 'must not be empty' }, { input: io.stdin, output: io.stderr });
    },
  };
}
