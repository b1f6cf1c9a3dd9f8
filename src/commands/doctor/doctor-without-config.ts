import type { AppContext } from '../../context.js';
import type { MmauthError } from '../../errors.js';
import { hintOf } from '../../failure/failure-report.js';
import { isVerbose, pickSetting } from '../../settings/settings.js';
import type { Output } from '../../ui/output.js';
import {
  checkBaseUrl,
  checkBrowser,
  checkLoopback,
  checkTokenEndpoint,
  fail,
  skip,
  type Check,
} from '../../diagnosis/doctor-checks.js';
import { checkServerMetadata } from '../../diagnosis/doctor-metadata.js';
import { checkSandbox } from '../../diagnosis/doctor-sandbox.js';

/** What opening the config file may throw that `doctor` reports as a finding, then goes on. */
export const CONFIG_FAILURES = new Set<string>(['store_malformed', 'store_unreadable', 'store_insecure']);

/**
 * The checks `doctor` runs when the config file cannot be opened (`failure`: one of
 * CONFIG_FAILURES): that finding with its fix, then every check that needs no profile — the server
 * that `baseUrl` (--base-url) or MMAUTH_BASE_URL names (its metadata and token endpoint), the
 * browser, the loopback listener and the sandbox. `timeoutS` bounds each request (seconds).
 * Never reads the file again and never throws for a check.
 */
export async function checksWithoutConfig(
  failure: MmauthError,
  options: { baseUrl?: string; timeout: number; verbose?: boolean },
  ctx: AppContext,
  out: Output,
): Promise<Check[]> {
  const fix = hintOf(failure, { command: 'doctor', profileName: 'default', origin: undefined });
  const checks: Check[] = [
    fail('config file', failure.message, fix ?? 'fix or move the file aside; mmauth never resets it by itself'),
    skip('profile', 'cannot tell: the config file cannot be read'),
  ];
  const base = checkBaseUrl(pickSetting(options.baseUrl, ctx.env.MMAUTH_BASE_URL, undefined), ctx.env);
  if (base.endpoints === undefined) {
    checks.push(skip('server', 'no --base-url or MMAUTH_BASE_URL to check while the config file cannot be read'));
  } else {
    checks.push(...base.checks);
    const trace = isVerbose(options, ctx.env) ? (line: string) => out.debug(line) : undefined;
    const fetch = ctx.http(options.timeout * 1000, trace).fetch;
    const metadata = await checkServerMetadata({ endpoints: base.endpoints, fetch }, undefined);
    checks.push(...metadata.checks);
    checks.push(...(await checkTokenEndpoint({ endpoints: metadata.endpoints, fetch }, ctx.nowMs())));
  }
  checks.push(checkBrowser(ctx.env, ctx.platform), await checkLoopback(), await checkSandbox(ctx));
  return checks;
}
