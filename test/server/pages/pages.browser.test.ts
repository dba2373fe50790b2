// The first hour in real headless Chromium: the home page and where it leads,
// the API reference rendered by Redoc from /openapi.json (served locally),
// the manual (/docs/<page>, every page at 1280 and 390 px, axe-core),
// the demo page identifying this very browser, the dashboard's install step
// and its chart of test traffic, everything usable at 390 px without
// horizontal scrolling, and /favicon.ico. Screenshots go to
// test-results/pages/ (git-ignored).
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasChromium, launchChromium, servedHarness, watchProblems } from '../../support/browser.js';
import type { Harness } from '../../support/harness.js';
import { deviceValues, identifyBody } from '../../support/signals.js';

const SHOTS = new URL('../../../test-results/pages/', import.meta.url);
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const MANUAL = readdirSync(new URL('../../../docs/', import.meta.url))
  .filter((f) => f.endsWith('.md'))
  .map((f) => f.slice(0, -3));

describe.skipIf(!hasChromium)('first-hour pages in headless Chromium', () => {
  let origin: string;
  let h: Harness;
  let closeService: () => Promise<void>;
  let browser: Browser;
  const problems: string[] = [];

  beforeAll(async () => {
    ({ h, origin, close: closeService } = await servedHarness(import.meta.filename));
    mkdirSync(SHOTS, { recursive: true });
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await closeService?.();
  });

  /**
   * Redoc's menu footer always shows Redocly's logo from their CDN; the page's
   * CSP blocks it (nothing leaves for another origin), and Chromium reports it.
   */
  const unexpected = () => problems.filter((p) => !/cdn\.redoc\.ly\/redoc\/logo-mini\.svg' violates the following Content Security Policy/.test(p));

  const shot = (page: Page, name: string) => page.screenshot({ path: new URL(name, SHOTS).pathname, fullPage: true });
  /** No horizontal scrolling: the document is no wider than the viewport. */
  const noSideScroll = async (page: Page) => {
    const [scroll, client] = await page.evaluate(() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]);
    expect(scroll, `${page.url()} is ${scroll}px wide in a ${client}px viewport`).toBeLessThanOrEqual(client);
  };

  it('home page: what it is, sign up / sign in, dashboard, API reference, demo, status; favicon', async () => {
    const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
    const page = watchProblems(await context.newPage(), problems);
    const res = await page.goto(`${origin}/`);
    expect(res?.status()).toBe(200);
    expect(res?.headers()['content-security-policy']).toContain("script-src 'self'");
    // Only /docs relaxes the policy (for Redoc).
    expect(res?.headers()['content-security-policy']).not.toMatch(/unsafe-inline|blob:/);
    expect(await page.textContent('h1')).toBe('deviceid');
    expect(await page.textContent('.hero')).toContain('stable visitor id');
    for (const [name, href] of [
      ['Sign up or sign in', '/login?next=%2Fdashboard'],
      ['See it identify your browser', '/demo'],
      ['API reference', '/docs'],
      ['Dashboard', '/dashboard'],
    ]) {
      expect(await page.getByRole('link', { name, exact: true }).first().getAttribute('href')).toBe(href);
    }
    await page.locator('#status.ok').waitFor();
    expect(await page.textContent('#status')).toBe('operational');
    await shot(page, '01-home.png');

    const icon = await page.request.get(`${origin}/favicon.ico`);
    expect(icon.status()).toBe(200);
    expect(icon.headers()['content-type']).toBe('image/x-icon');
    expect([...(await icon.body()).subarray(0, 4)]).toEqual([0, 0, 1, 0]);
    expect(await page.locator('link[rel=icon]').getAttribute('href')).toBe('/favicon.ico');
    await context.close();
    expect(unexpected()).toEqual([]);
  }, 60_000);

  it('/docs renders the API reference from /openapi.json with Redoc served by this service', async () => {
    const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
    const page = watchProblems(await context.newPage(), problems);
    const requests: string[] = [];
    page.on('request', (r) => requests.push(r.url()));
    const res = await page.goto(`${origin}/docs`);
    expect(res?.status()).toBe(200);
    // Redoc's inline styles and blob: search worker, and nothing else beyond the pages' policy.
    const csp = res?.headers()['content-security-policy'] ?? '';
    for (const d of [
      "default-src 'none'",
      "script-src 'self'",
      "style-src 'self' 'unsafe-inline'",
      "worker-src 'self' blob:",
      "frame-ancestors 'none'",
      "form-action 'none'",
    ])
      expect(csp).toContain(d);
    expect(res?.headers()['x-frame-options']).toBe('DENY');
    await page.getByRole('heading', { name: 'Identify a device' }).waitFor({ timeout: 30_000 });
    expect(await page.textContent('body')).toContain('Get a full event');
    expect(await page.textContent('body')).toContain('Revoke the presented key');
    // Nothing from another origin: no CDN.
    const elsewhere = requests.filter((u) => !u.startsWith(origin) && !u.startsWith('blob:') && !u.startsWith('data:'));
    expect(elsewhere.filter((u) => u !== 'https://cdn.redoc.ly/redoc/logo-mini.svg')).toEqual([]);
    expect(requests).toContain(`${origin}/assets/redoc.standalone.js`);
    await shot(page, '02-docs.png');
    await context.close();
    expect(unexpected()).toEqual([]);
  }, 90_000);

  it('the manual: every page at 1280 and 390 px, without horizontal scrolling at 390, axe-core finding nothing serious; its links lead from page to page', async () => {
    for (const width of [1280, 390]) {
      const context = await browser.newContext({ viewport: { width, height: 900 } });
      const page = watchProblems(await context.newPage(), problems);
      for (const name of MANUAL) {
        const res = await page.goto(`${origin}/docs/${name}`);
        expect(res?.status(), name).toBe(200);
        expect(await page.locator('article h1').count(), name).toBe(1);
        if (width === 390) await noSideScroll(page);
        if (name === 'index' || name === 'configuration') await shot(page, `06-docs-${name}-${width}.png`);
        // The same markup at both widths: axe once.
        if (width === 390) continue;
        // Evaluated over the DevTools protocol, which the page's CSP (script-src 'self') does not govern.
        await page.evaluate(AXE);
        const violations = (await page.evaluate(async () => {
          const result = await (window as unknown as { axe: { run: (o: unknown) => Promise<{ violations: unknown[] }> } }).axe.run({
            resultTypes: ['violations'],
          });
          return result.violations;
        })) as { id: string; impact: string | null; help: string; nodes: { target: string[] }[] }[];
        expect(
          violations
            .filter((v) => v.impact === 'serious' || v.impact === 'critical')
            .map((v) => `${v.impact} ${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`),
          name,
        ).toEqual([]);
      }
      // From the index to a page, and from there to a heading of another.
      await page.goto(`${origin}/docs/index`);
      await page.locator('article').getByRole('link', { name: 'Configuration', exact: true }).click();
      await page.waitForURL(`${origin}/docs/configuration`);
      await page.locator('article').getByRole('link', { name: 'Teams', exact: true }).first().click();
      await page.waitForURL(`${origin}/docs/accounts#teams-members-roles-and-the-audit-log`);
      expect(await page.locator('#teams-members-roles-and-the-audit-log').textContent()).toBe('Teams: members, roles and the audit log');
      await context.close();
    }
    expect(unexpected()).toEqual([]);
  }, 180_000);

  it('the demo identifies this browser and shows visitor id, confidence, verdicts and the full event; the dashboard shows the install step, test traffic apart, and fits 390 px', async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    const page = watchProblems(await context.newPage(), problems);
    await page.goto(`${origin}/`);
    await noSideScroll(page);
    await shot(page, '03-home-390.png');

    // Sign up from the home page, then the demo.
    await page.getByRole('link', { name: 'Sign up or sign in' }).click();
    await page.getByRole('button', { name: 'Create one', exact: true }).click();
    await page.fill('#email', 'newcomer@example.com');
    await page.fill('#password', 'correct horse battery');
    await page.click('#submit');
    // Sign-up hashes the password and bundles the dashboard on first request: slow beside other test files on two cores.
    await page.waitForURL(`${origin}/dashboard`, { timeout: 60_000 });
    await page.goto(`${origin}/demo`);
    await page.locator('#demo-result').waitFor({ state: 'visible', timeout: 30_000 });
    const visitorId = await page.textContent('#r-visitor');
    expect(visitorId).toMatch(/^iq_[0-9A-Z]{26}$/);
    expect(await page.textContent('#r-confidence')).toMatch(/^0\.\d\d \(\d+%\)$/);
    expect(await page.locator('#r-verdicts li').count()).toBe(12);
    const event = JSON.parse((await page.textContent('#r-event'))!);
    expect(event).toMatchObject({ visitorId, linkedId: 'demo-user', tag: { page: 'demo' } });
    expect(Object.keys(event.signals.client).length).toBeGreaterThan(30);
    await noSideScroll(page);
    await shot(page, '04-demo-390.png');
    // Again: the same browser is the same visitor, with the key the page kept.
    await page.click('#demo-run');
    await page.locator('#r-visits', { hasText: '2' }).waitFor();
    expect(await page.textContent('#r-visitor')).toBe(visitorId);

    // The dashboard: the demo's calls are test traffic, shown apart; the install step.
    await page.goto(`${origin}/dashboard`);
    await page.locator('#plan-panel').waitFor({ state: 'visible' });
    expect(await page.locator('#chart rect.bar-test').count()).toBe(1);
    expect(await page.locator('#chart rect.bar').count()).toBe(0);
    expect(await page.textContent('#chart-caption')).toContain('Test keys, shown apart, never count: 2 calls.');
    const nav = (name: string) => page.locator('.dash-nav').getByRole('link', { name, exact: true }).click();
    await nav('Install');
    // The note names the project's browser key once its keys have loaded.
    await page.locator('#install-note', { hasText: 'Demo page (test)' }).waitFor();
    expect(await page.inputValue('#snippet-html')).toContain(`<script src="${origin}/agent.js"></script>`);
    // A live key created on the API keys page goes into the snippets (the page is not reloaded between).
    await nav('API keys');
    await page.fill('#key-name', 'Website');
    await page.click('#key-form button[type=submit]');
    const key = await page.inputValue('#new-key-value');
    expect(key).toMatch(/^svc_live_/);
    await nav('Install');
    await expect.poll(() => page.inputValue('#snippet-html')).toContain(`apiKey: '${key}'`);
    expect(await page.inputValue('#snippet-npm')).toContain("import { load } from '@deviceid/agent';");
    expect(await page.inputValue('#snippet-npm')).toContain(`apiKey: '${key}'`);
    await noSideScroll(page);
    await shot(page, '05-dashboard-390.png');

    // The snippet works: a live call shows as a live bar next to the test one.
    const res = await fetch(`${origin}/v1/identify`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: JSON.stringify(identifyBody(deviceValues(9))),
    });
    expect(res.status).toBe(200);
    await nav('Overview');
    await page.reload();
    await page.locator('#chart rect.bar').waitFor();
    expect(await page.locator('#chart rect.bar-test').count()).toBe(1);

    await page.goto(`${origin}/docs`);
    await page.getByRole('heading', { name: 'Identify a device' }).waitFor({ timeout: 30_000 });
    await noSideScroll(page);
    await context.close();
    expect(unexpected()).toEqual([]);
    expect(h.logs()).not.toContain(key);
  }, 120_000);
});
