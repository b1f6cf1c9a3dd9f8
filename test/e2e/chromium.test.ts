/**
 * mmauth login with a real browser: a system Chromium, or the one inside @sparticuz/chromium
 * (test/support/chromium-flags.mjs chooses), driven by playwright-core and given to mmauth through
 * BROWSER (test/support/chromium-browser.mjs). Nothing here is skipped: without Chromium these
 * tests fail and say so.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { CHROMIUM_PATH as CHROMIUM } from '../support/chromium-flags.mjs';
import { openChromiumPage } from '../support/chromium-page.js';
import { makeConfigDir, runCli, startCli, REMOVE_TREE } from '../support/cli.js';
import { readConfig, readConfigText, startTestEmulator } from '../support/emulator.js';
import { readPng } from '../support/png.js';

const DRIVER = `${process.execPath} ${resolve(import.meta.dirname, '../support/chromium-browser.mjs')}`;

interface DriverReport {
  consentShot: string | null;
  resultShot: string | null;
  finalUrl: string | null;
  result: string | null;
  title: string | null;
  detail: string | null;
  consoleErrors: string[];
  error: string | null;
}

function scratchDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mmauth-chromium-test-'));
  onTestFinished(() => rmSync(dir, REMOVE_TREE));
  return dir;
}

/** Waits (bounded) for the driver's report: it writes it after mmauth has answered the browser. */
async function readReport(path: string, timeoutMs = 20_000): Promise<DriverReport> {
  const deadline = Date.now() + timeoutMs;
  while (!existsSync(path)) {
    if (Date.now() > deadline) throw new Error(`the Chromium driver wrote no report within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return JSON.parse(readFileSync(path, 'utf8')) as DriverReport;
}

/** Runs `mmauth login …` with Chromium as BROWSER; returns mmauth's result and the driver's report. */
async function loginInChromium(args: string[], decision: 'allow' | 'deny') {
  expect(
    existsSync(CHROMIUM),
    `${CHROMIUM} is missing (CHROMIUM_FOR_TESTS names another, or unset it for the npm one)`,
  ).toBe(true);
  const emulator = await startTestEmulator();
  const configDir = makeConfigDir();
  const scratch = scratchDir();
  const reportFile = join(scratch, 'report.json');
  const result = await runCli(['login', '--wait', '45', ...args], {
    env: emulator.env(configDir, {
      BROWSER: DRIVER,
      MMAUTH_CHROMIUM_REPORT: reportFile,
      MMAUTH_CHROMIUM_SHOTS: scratch,
      MMAUTH_AGENT_DECISION: decision,
    }),
    timeoutMs: 50_000,
  });
  const report = await readReport(reportFile);
  expect(report.error).toBeNull();
  return { emulator, configDir, result, report };
}

function expectScreenshots(report: DriverReport): void {
  for (const shot of [report.consentShot, report.resultShot]) {
    expect(shot).not.toBeNull();
    const png = readPng(shot ?? '');
    expect(png.width).toBeGreaterThan(100);
    expect(png.height).toBeGreaterThan(100);
  }
}

describe('login in a real browser (Chromium through playwright-core)', { timeout: 60_000 }, () => {
  it('code flow, Authorize: the page says "Signed in" and the token is stored', async () => {
    const { result, report, configDir } = await loginInChromium([], 'allow');
    expect(result.code).toBe(0);
    expect(report).toMatchObject({ result: 'success', title: 'Signed in', consoleErrors: [] });
    expect(report.finalUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback\?code=/);
    expect(readConfig(configDir)).toMatchObject({ profiles: { default: { token: { grant: 'authorization_code' } } } });
    expectScreenshots(report);
  });

  it('code flow, Deny: the page reports the error (never success), exit 4, nothing stored', async () => {
    const { result, report, configDir } = await loginInChromium([], 'deny');
    expect(report.result).toBe('error');
    expect(report.title).toBe('Sign-in failed');
    expect(report.detail).toContain('access_denied');
    expect(result.code).toBe(4);
    expect(readConfigText(configDir)).toBeUndefined();
    expectScreenshots(report);
  });

  it("implicit flow, Authorize: the relay page's script runs under its CSP, hands over the fragment, and removes the token from the address bar", async () => {
    const { result, report, configDir } = await loginInChromium(['--implicit'], 'allow');
    expect(result.code).toBe(0);
    expect(report).toMatchObject({ result: 'success', title: 'Signed in', consoleErrors: [] });
    expect(report.finalUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    expect(readConfig(configDir)).toMatchObject({ profiles: { default: { token: { grant: 'implicit' } } } });
    expectScreenshots(report);
  });

  it('implicit flow, Deny: the denial in the fragment is reported as an error on the page and exit 4', async () => {
    const { result, report, configDir } = await loginInChromium(['--implicit'], 'deny');
    expect(report.result).toBe('error');
    expect(report.detail).toContain('access_denied');
    expect(result.code).toBe(4);
    expect(readConfigText(configDir)).toBeUndefined();
  });

  it('the result page escapes what the server sent: markup in error_description is shown as text, never run', async () => {
    expect(
      existsSync(CHROMIUM),
      `${CHROMIUM} is missing (CHROMIUM_FOR_TESTS names another, or unset it for the npm one)`,
    ).toBe(true);
    const emulator = await startTestEmulator();
    const login = startCli(['login', '--no-browser', '--wait', '30'], {
      env: emulator.env(makeConfigDir()),
      timeoutMs: 40_000,
    });
    const [url] = await login.waitForStderr(/http:\/\/127\.0\.0\.1:\d+\/oauth2\/authorize\?\S+/);
    const authorize = new URL(url).searchParams;
    const hostile = '<img src=x onerror="document.title=\'pwned\'"><b>bold</b>';
    const callback = `${authorize.get('redirect_uri')}?${new URLSearchParams({ error: 'access_denied', error_description: hostile, state: authorize.get('state') ?? '' })}`;

    const page = await openChromiumPage();
    await page.goto(callback, { timeout: 15_000 });
    expect(await page.getAttribute('#result', 'data-result')).toBe('error');
    expect(await page.textContent('#detail')).toContain(hostile);
    expect(await page.locator('#detail *').count()).toBe(0);
    expect(await page.title()).not.toBe('pwned');
    expect((await login.done).code).toBe(4);
  });
});
