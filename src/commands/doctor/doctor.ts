import type { Command } from '@commander-js/extra-typings';
import type { AppContext } from '../../context.js';
import { isMmauthError, MmauthError } from '../../errors.js';
import type { Check } from '../../diagnosis/doctor-checks.js';
import type { DiagnosisOptions } from '../../diagnosis/diagnose.js';
import { hintOf } from '../../failure/failure-report.js';
import type { ProfileStore } from '../../store/profile-store.js';
import { MAX_TIMER_SECONDS, parseSeconds, PROFILE_HELP, type LocalOptions } from '../options.js';
import type { Output } from '../../ui/output.js';
import { withoutAgent } from '../local-only-notice.js';
import { agentSocketOf, isVerbose } from '../../settings/settings.js';
import { selectProfile } from '../../settings/profile-selection.js';
import { requireProfile } from '../../settings/target.js';

/** Options of `mmauth doctor`. */
export interface DoctorOptions extends LocalOptions {
  baseUrl?: string;
  clientId?: string;
  /** Seconds, for each request. */
  timeout: number;
}

/** Registers `mmauth doctor`; the logic is runDoctor. */
export function registerDoctor(program: Command, ctx: AppContext): void {
  program
    .command('doctor')
    .description(
      'check the config, the server, the client registration, the stored token, the clock and the browser; each with its fix',
    )
    .option('--profile <name>', PROFILE_HELP)
    .option('--base-url <url>', "service base URL (env MMAUTH_BASE_URL; default: the profile's)")
    .option('--client-id <id>', "client id (env MMAUTH_CLIENT_ID; default: the profile's)")
    .option('--timeout <seconds>', 'bound on each request', parseSeconds(1, MAX_TIMER_SECONDS), 10)
    .option('--json', 'print one JSON document on stdout')
    .option('--verbose', 'trace every HTTP exchange (secrets redacted)')
    .addHelpText(
      'after',
      `
Exit 0 when no check failed (warnings allowed), 1 otherwise. Never prints a secret.

Examples:
  $ mmauth doctor
  $ mmauth doctor --profile work --json`,
    )
    .action(async (options) => runDoctor(options, ctx));
}

/**
 * Runs every check (diagnoseProfile) for the profile and reports each line ok/warn/fail
 * with its fix; --json prints `{profile, ok, checks: [{name, status, detail, fix}]}`. With
 * MMAUTH_AGENT_SOCK set, the agent's checks come first (checkAgent: reachable, trusted, its token
 * active), and a machine with no local profile of that name is checked through the agent alone.
 * Throws `doctor_failed` (exit 1) after printing when a check failed; warnings alone exit 0.
 */
export async function runDoctor(options: DoctorOptions, given: AppContext): Promise<void> {
  // This machine's own profile and setup, and the agent MMAUTH_AGENT_SOCK names.
  const ctx = withoutAgent(given);
  const out = await ctx.output();
  const agentSocket = agentSocketOf(given.env);
  const named = options.profile ?? (ctx.env.MMAUTH_PROFILE?.trim() || undefined);
  const agentChecks =
    agentSocket === undefined
      ? []
      : await (await import('../../diagnosis/doctor-agent.js')).checkAgent(agentSocket, named, options.timeout);
  const { CONFIG_FAILURES, diagnoseProfile, diagnoseWithoutConfig } = await import('../../diagnosis/diagnose.js');
  // A config file that cannot be opened is a finding; the checks that need no profile still run.
  let store: ProfileStore;
  try {
    store = await ctx.openStore();
    store.currentProfile(); // reads the file: one that cannot be read is a finding, not a stop
  } catch (error) {
    if (!isMmauthError(error) || !CONFIG_FAILURES.has(error.code)) throw error;
    const profileName = options.profile ?? (ctx.env.MMAUTH_PROFILE?.trim() || 'default');
    const fix = hintOf(error, { command: 'doctor', profileName: 'default', origin: undefined });
    const checks = await diagnoseWithoutConfig(error, fix, doctorSettings(options, ctx, out), ctx);
    return reportChecks(profileName, [...agentChecks, ...checks], options, out);
  }
  const selection = await selectProfile(options.profile, ctx, store);
  const profileName = selection.name;
  // A runner fed by the agent: nothing of the grant is here, the agent is what there is to check.
  if (agentSocket !== undefined && store.listOne(profileName) === undefined) {
    const detail = `none named "${profileName}" here: tokens come from the agent (MMAUTH_AGENT_SOCK)`;
    const none: Check = { name: 'profile', status: 'skip', detail };
    return reportChecks(named ?? profileName, [...agentChecks, none], options, out);
  }
  // A profile named by a rule (not the default) must exist: `doctor --profile typo` is unknown_profile.
  if (selection.selectedBy !== 'default' && store.listOne(profileName) === undefined) {
    requireProfile({ profile: undefined, profileName, store, selection });
  }
  const checks = await diagnoseProfile(store, selection, doctorSettings(options, ctx, out), ctx);
  reportChecks(profileName, [...agentChecks, ...checks], options, out);
}

/**
 * Prints `checks` (a line each, or with --json `{profile, ok, checks: [{name, status, detail, fix}]}`)
 * and throws `doctor_failed` (exit 1) after printing when one failed; warnings alone pass.
 */
function reportChecks(profileName: string, checks: readonly Check[], options: DoctorOptions, out: Output): void {
  const isOk = checks.every((check) => check.status !== 'fail');
  if (options.json === true)
    out.json(
      { profile: profileName, ok: isOk, checks: checks.map((c) => ({ ...c, fix: c.fix ?? null })) },
      { redact: true },
    );
  for (const check of checks) {
    const line = `${check.status.padEnd(4)}  ${check.name}: ${check.detail}`;
    if (check.status === 'fail') out.failed(line, check.fix);
    else if (check.status === 'warn') out.warn(`${line}${check.fix === undefined ? '' : ` — ${check.fix}`}`);
    else if (check.status === 'skip') out.info(`- ${line}`);
    else out.info(`✓ ${line}`);
  }
  if (!isOk) {
    const failed = checks.filter((check) => check.status === 'fail').map((check) => check.name);
    throw new MmauthError(
      'doctor_failed',
      `${failed.length} check${failed.length === 1 ? '' : 's'} failed: ${failed.join(', ')}`,
    );
  }
}

/** What the diagnosis takes of doctor's options: the server and client given, the bound, the trace. */
function doctorSettings(options: DoctorOptions, ctx: AppContext, out: Output): DiagnosisOptions {
  const trace = isVerbose(options, ctx.env) ? (line: string) => out.debug(line) : undefined;
  return { baseUrl: options.baseUrl, clientId: options.clientId, timeout: options.timeout, trace };
}
