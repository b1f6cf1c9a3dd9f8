import { Command } from '@commander-js/extra-typings';
import { registerApi } from './commands/api.js';
import { registerClientCredentials } from './commands/client-credentials.js';
import { registerCompletion } from './commands/completion.js';
import { registerDoctor } from './commands/doctor.js';
import { registerEmulator } from './commands/emulator.js';
import { registerHeader } from './commands/header.js';
import { registerInfo } from './commands/info.js';
import { registerLogin } from './commands/login.js';
import { registerLogout } from './commands/logout.js';
import { registerRefresh } from './commands/refresh.js';
import { registerRevoke } from './commands/revoke.js';
import { registerStatus } from './commands/status.js';
import { registerToken } from './commands/token.js';
import type { AppContext } from './context.js';
import { conflictMessage } from './commands/shared/conflicts.js';

/**
 * Builds the commander program: global help and version, one register call per command, no
 * logic. Commander never exits the process itself (exitOverride); cli.ts maps its errors.
 */
export function buildProgram(ctx: AppContext, version: string): Command {
  const program = new Command('mmauth')
    .description("Obtain, inspect and revoke OAuth 2.0 tokens for the mind-mapping service's HTTP API.")
    .version(version, '-V, --version')
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
      `
Examples:
  $ mmauth emulator                                   # a local copy of the service's OAuth interface
  $ mmauth login --base-url http://127.0.0.1:4010 --client-id mmauth-demo
  $ mmauth info
  $ mmauth client-credentials --no-save --json
  $ mmauth revoke

Exit codes: 0 ok, 1 error, 2 usage, 3 network/timeout, 4 authentication/authorization, 130 interrupted.`,
    );
  registerLogin(program, ctx);
  registerClientCredentials(program, ctx);
  registerInfo(program, ctx);
  registerRevoke(program, ctx);
  registerToken(program, ctx);
  registerRefresh(program, ctx);
  registerApi(program, ctx);
  registerHeader(program, ctx);
  registerStatus(program, ctx);
  registerLogout(program, ctx);
  registerDoctor(program, ctx);
  registerEmulator(program, ctx);
  registerCompletion(program, ctx);
  return program;
}
