import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Page } from 'playwright-core';
import { onTestFinished } from 'vitest';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from './chromium-flags.mjs';
import { REMOVE_TREE } from './cli.js';

/**
 * A page of a fresh headless Chromium (the one chromium-flags.mjs chooses), in a profile of its own
 * (bounded start: 20 s). The browser is closed and its profile removed when the test ends.
 */
export async function openChromiumPage(): Promise<Page> {
  const userDataDir = mkdtempSync(join(tmpdir(), 'mmauth-chromium-page-'));
  onTestFinished(() => rmSync(userDataDir, REMOVE_TREE));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: CHROMIUM_ARGS,
    timeout: 20_000,
  });
  onTestFinished(() => context.close());
  return context.pages()[0] ?? (await context.newPage());
}
