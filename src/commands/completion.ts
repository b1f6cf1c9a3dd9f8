import { Argument, type Command } from '@commander-js/extra-typings';
import type { AppContext } from '../context.js';
import { bashScript, fishScript, zshScript, type CommandSpec } from '../ui/completion-scripts.js';

/** The shells `mmauth completion` writes a script for (the argument's choices). */
export const SHELLS = ['bash', 'zsh', 'fish'] as const;
/** One of SHELLS. */
export type Shell = (typeof SHELLS)[number];

/** Registers `mmauth completion`; the logic is runCompletion. */
export function registerCompletion(program: Command, ctx: AppContext): void {
  program
    .command('completion')
    .description('print a shell completion script for bash, zsh or fish')
    .addArgument(new Argument('<shell>', 'the shell to complete in').choices(SHELLS))
    .addHelpText(
      'after',
      `
Examples:
  $ source <(mmauth completion bash)                       # add to ~/.bashrc
  $ mmauth completion zsh > "\${fpath[1]}/_mmauth"            # then restart zsh
  $ mmauth completion fish > ~/.config/fish/completions/mmauth.fish`,
    )
    .action(async (shell) => runCompletion(shell, program, ctx));
}

/**
 * Prints the completion script for `shell` on stdout, generated from the commander program itself
 * (every subcommand, its options and their descriptions), so it never drifts from the CLI.
 */
export async function runCompletion(shell: Shell, program: Command, ctx: AppContext): Promise<void> {
  const out = await ctx.output();
  const specs = describeCommands(program);
  out.data(shell === 'bash' ? bashScript(specs) : shell === 'zsh' ? zshScript(specs) : fishScript(specs));
}

/**
 * The subcommands of `program` as the script generators see them: name, description, every option
 * (flags, whether it takes a value, fixed choices, whether the value is a file) plus -h/--help,
 * and the fixed choices of the first argument. Reads commander's public Command/Option fields.
 */
export function describeCommands(program: Command): CommandSpec[] {
  return program.commands.map((command) => ({
    name: command.name(),
    description: command.description(),
    options: [
      ...command.options.map((option) => ({
        flags: [option.short, option.long].filter((flag): flag is string => flag !== undefined),
        description: option.description,
        takesValue: option.required || option.optional,
        choices: option.argChoices,
        isFile: (option.long ?? '').endsWith('-file'),
        isProfile: option.long === '--profile',
      })),
      {
        flags: ['-h', '--help'],
        description: 'display help for command',
        takesValue: false,
        choices: undefined,
        isFile: false,
        isProfile: false,
      },
    ],
    argumentChoices:
      command.commands.length > 0
        ? command.commands.map((sub) => sub.name())
        : command.registeredArguments[0]?.argChoices,
  }));
}
