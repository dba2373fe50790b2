// Real headless Chromium for browser tests (Debian's chromium; CI installs
// it), Debian's firefox-esr run as a plain process where installed, and the
// service on a real port whose BASE_URL is that very address.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { RequestListener } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions, type Page } from 'playwright-core';
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
export const launchChromiumProfile = (dir: string, options: BrowserContextOptions = {}): Promise<BrowserContext> =>
  chromium.launchPersistentContext(dir, { ...options, executablePath: CHROMIUM, headless: true, args: FLAGS });

export const FIREFOX = '/usr/bin/firefox-esr';
/** Firefox tests skip where no firefox-esr is installed. */
export const hasFirefox = existsSync(FIREFOX);

/** A profile that opens nothing of its own: no first-run pages, default-browser question, telemetry or updates. */
const FIREFOX_PREFS = [
  'user_pref("browser.shell.checkDefaultBrowser", false);',
  'user_pref("browser.startup.homepage_override.mstone", "ignore");',
  'user_pref("browser.aboutwelcome.enabled", false);',
  'user_pref("datareporting.policy.dataSubmissionEnabled", false);',
  'user_pref("toolkit.telemetry.reportingpolicy.firstRun", false);',
  'user_pref("app.update.disabledForTesting", true);',
].join('\n');

/**
 * Headless Firefox on a fresh profile showing `url` (playwright-core cannot
 * drive stock Firefox: the page reports to the test itself). `screen` is the
 * headless screen's size (Firefox's own default is 1366x768). close() ends
 * the process group it started and removes the profile.
 */
export function openInFirefox(url: string, screen?: { width: number; height: number }): { close: () => Promise<void> } {
  const dir = mkdtempSync(join(tmpdir(), 'deviceid-firefox-'));
  writeFileSync(join(dir, 'user.js'), FIREFOX_PREFS);
  const child = spawn(FIREFOX, ['--headless', '--no-remote', '--profile', dir, url], {
    detached: true,
    stdio: 'ignore',
    env: {
      ...process.env,
      MOZ_HEADLESS: '1',
      MOZ_CRASHREPORTER_DISABLE: '1',
      ...(screen && { MOZ_HEADLESS_WIDTH: String(screen.width), MOZ_HEADLESS_HEIGHT: String(screen.height) }),
    },
  });
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.once('error', () => resolve());
  });
  const signal = (s: NodeJS.Signals) => {
    try {
      if (child.pid) process.kill(-child.pid, s);
    } catch {
      // Already gone.
    }
  };
  return {
    async close() {
      if (child.exitCode === null && child.signalCode === null) {
        signal('SIGTERM');
        const timer = setTimeout(() => signal('SIGKILL'), 5_000);
        await exited;
        clearTimeout(timer);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

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
