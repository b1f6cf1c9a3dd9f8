/**
 * A BROWSER for `mmauth login` in the browser tests: Debian's Chromium driven by playwright-core.
 * It opens the authorization URL in a fresh profile, signs in on the emulator's sign-in page,
 * screenshots the consent page, clicks Authorize (or Deny), follows the redirect to mmauth's
 * listener, waits until the page there shows a verdict (for --implicit, after the relay page's own
 * script has run), screenshots it, and writes a JSON report. Plain JavaScript: BROWSER runs it
 * with node, which does not read TypeScript.
 *
 * env: MMAUTH_CHROMIUM_REPORT (report file), MMAUTH_CHROMIUM_SHOTS (screenshot directory),
 *      MMAUTH_AGENT_DECISION (allow|deny), MMAUTH_AGENT_LOGIN, MMAUTH_AGENT_PASSWORD
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from './chromium-flags.mjs';

const url = process.argv[process.argv.length - 1] ?? '';
const reportFile = process.env.MMAUTH_CHROMIUM_REPORT ?? '';
const shots = process.env.MMAUTH_CHROMIUM_SHOTS ?? tmpdir();
const decision = process.env.MMAUTH_AGENT_DECISION === 'deny' ? 'deny' : 'allow';
const report = {
  url,
  decision,
  steps: [],
  consentShot: null,
  resultShot: null,
  finalUrl: null,
  result: null,
  title: null,
  detail: null,
  consoleErrors: [],
  error: null,
};

const userDataDir = mkdtempSync(join(tmpdir(), 'mmauth-chromium-'));
let context;
try {
  context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: CHROMIUM_ARGS,
    timeout: 20_000,
  });
  const page = context.pages()[0] ?? (await context.newPage());
  page.setDefaultTimeout(15_000);
  page.on('console', (message) => message.type() === 'error' && report.consoleErrors.push(message.text()));
  const serverOrigin = new URL(url).origin;
  await page.goto(url);
  report.steps.push(`opened ${page.url().split('?')[0]}`);
  if (await page.locator('input[type=password]').count()) {
    await page.fill('#login', process.env.MMAUTH_AGENT_LOGIN ?? 'demo');
    await page.fill('#password', process.env.MMAUTH_AGENT_PASSWORD ?? 'demo');
    await Promise.all([page.waitForLoadState('load'), page.click('#sign-in')]);
    report.steps.push('signed in');
  }
  await page.waitForSelector('#allow');
  report.consentShot = join(shots, 'consent.png');
  await page.screenshot({ path: report.consentShot, fullPage: true });
  await Promise.all([
    page.waitForURL((next) => next.origin !== serverOrigin),
    page.click(decision === 'allow' ? '#allow' : '#deny'),
  ]);
  report.steps.push(`clicked ${decision}, now at ${page.url().split(/[?#]/)[0]}`);
  const verdict = page.locator('#result[data-result="success"], #result[data-result="error"]');
  await verdict.waitFor();
  report.finalUrl = page.url();
  report.result = await verdict.getAttribute('data-result');
  report.title = await verdict.textContent();
  report.detail = await page.locator('#detail').textContent();
  report.resultShot = join(shots, 'result.png');
  await page.screenshot({ path: report.resultShot, fullPage: true });
} catch (error) {
  report.error = error instanceof Error ? error.message : String(error);
} finally {
  await context?.close().catch(() => undefined);
  rmSync(userDataDir, { recursive: true, force: true });
  if (reportFile) writeFileSync(reportFile, JSON.stringify(report, null, 2));
}
