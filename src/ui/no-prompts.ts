import { MmauthError } from '../errors.js';
import type { Prompter } from './prompts.js';

/** `prompt_unavailable` for a question a program's run cannot ask, naming where the value may come from. */
function unavailable(message: string, alternatives: string): MmauthError {
  const what = message.replace(/:$/, '');
  return new MmauthError(
    'prompt_unavailable',
    `${what.charAt(0).toLowerCase()}${what.slice(1)} is needed and a program's run never prompts`,
    {
      hint: `provide it with ${alternatives}`,
    },
  );
}

/**
 * The Prompter of a run that never prompts (a program's: the library): `canPrompt` false, and
 * every question fails with `prompt_unavailable` naming where the value may come from, so that a
 * setting must come from an option, the environment or the profile.
 */
export const NO_PROMPTS: Prompter = {
  canPrompt: false,
  secret: (message, alternatives) => Promise.reject(unavailable(message, alternatives)),
  text: (message, alternatives) => Promise.reject(unavailable(message, alternatives)),
  checkbox: (message, _choices, alternatives) => Promise.reject(unavailable(message, alternatives)),
};
