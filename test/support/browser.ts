// Real headless Chromium for browser tests (Debian's chromium; CI installs
// it), and the service on a real port whose BASE_URL is that very address.
import { existsSync } from 'node:fs';
import type { RequestListener } from 'node:http';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { createHarness, type Harness } from './harness.js';
import { listen } from './httpServer.js';

export const CHROMIUM = '/usr/bin/chromium';
/** Browser tests skip where no chromium is installed. */
export const hasChromium = existsSync(CHROMIUM);
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

export const launchChromium = (): Promise<Browser> => chromium.launch({ executablePath: CHROMIUM, headless: true, args: FLAGS });

/** A browser on a profile kept in `dir` (a normal window's storage, on disk); the contexts of launchChromium are private ones. */
export const launchChromiumProfile = (dir: string): Promise<BrowserContext> =>
  chromium.launchPersistentContext(dir, { executablePath: CHROMIUM, headless: true, args: FLAGS });

/**
 * A harness served on 127.0.0.1. It listens first so BASE_URL (the CSRF
 * origin and the device flow's verification URL) is the real address.
 */
export async function servedHarness(testFile: string, env: Record<string, string> = {}): Promise<{ h: Harness; origin: string; close: () => Promise<void> }> {
  let handler: RequestListener = (_req, res) => res.end();
  const served = await listen((req, res) => handler(req, res));
  const h = await createHarness(testFile, { ...env, BASE_URL: served.url });
  handler = h.app;
  return {
    h,
    origin: served.url,
    close: async () => {
      await served.close();
      await h.close();
    },
  };
}

/** Records script errors and CSP violations of `page` in `problems`; pages must have none. */
export function watchProblems(page: Page, problems: string[]): Page {
  page.on('console', (m) => {
    if (m.type() === 'error' && !/Failed to load resource/.test(m.text())) problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(e.message));
  return page;
}
