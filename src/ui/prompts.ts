import { MmauthError } from '../errors.js';
import { isTerminalFd } from './fd-writer.js';
import { isCi } from '../util/ci.js';

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
   * Asks for a secret with a masked prompt on stderr. Throws `prompt_unavailable` naming `alternatives`
   * when prompting is not allowed, InterruptedError-worthy errors propagate as thrown by inquirer.
   */
  secret(message: string, alternatives: string): Promise<string>;
  /**
   * Asks for one line of text on stderr; `validate` returns an error message or true. Throws
   * UsageError (exit 2) naming `alternatives` when prompting is not allowed.
   */
  text(message: string, alternatives: string, validate?: (value: string) => string | true): Promise<string>;
  /**
   * Asks to tick any of `choices` (space toggles, enter confirms; at least one). Returns the
   * ticked values in the order given. Throws `prompt_unavailable` naming `alternatives` without a TTY.
   */
  checkbox(
    message: string,
    choices: ReadonlyArray<{ value: string; isChecked: boolean }>,
    alternatives: string,
  ): Promise<string[]>;
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}

export { isCi };

/** Creates the Prompter over the given streams; @inquirer/* load only when a prompt is shown. */
export function createPrompter(io: PromptEnvironment): Prompter {
  // Judged on first use, and from fstat where it can: touching stdin creates its stream (about
  // 2 ms), which most commands never read. `io` is the process: stdin is fd 0, stderr fd 2.
  const canPrompt = () => !isCi(io.env) && isTerminalFd(0, () => io.stdin) && isTerminalFd(2, () => io.stderr);
  const refuse = (message: string, alternatives: string) => {
    if (!canPrompt()) {
      const why = isCi(io.env) ? 'CI is set, so mmauth does not prompt' : 'there is no terminal to ask on';
      throw new MmauthError('prompt_unavailable', `${lowerFirst(message.replace(/:$/, ''))} is needed and ${why}`, {
        hint: `provide it with ${alternatives}`,
      });
    }
  };
  const context = () => ({ input: io.stdin, output: io.stderr });
  return {
    get canPrompt() {
      return canPrompt();
    },
    async secret(message, alternatives) {
      refuse(message, alternatives);
      const { default: password } = await import('@inquirer/password');
      return password({ message, mask: '*', validate: (value) => value !== '' || 'must not be empty' }, context());
    },
    async text(message, alternatives, validate) {
      refuse(message, alternatives);
      const { default: input } = await import('@inquirer/input');
      const answer = await input(
        { message, required: true, validate: (value) => validate?.(value.trim()) ?? true },
        context(),
      );
      return answer.trim();
    },
    async checkbox(message, choices, alternatives) {
      refuse(message, alternatives);
      const { default: checkbox } = await import('@inquirer/checkbox');
      return checkbox(
        {
          message,
          choices: choices.map((choice) => ({ value: choice.value, name: choice.value, checked: choice.isChecked })),
          required: true,
          instructions: ' (space to tick, enter to confirm)',
        },
        context(),
      );
    },
  };
}
