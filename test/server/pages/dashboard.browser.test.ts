// The dashboard end to end in real headless Chromium: sign up on the login
// page, land on the dashboard, read plan and usage, create a key and use it,
// revoke it, switch plan, manage projects, sign out. The browser's clock is
// pinned to the harness clock so dates and key ages agree with the server.
// Screenshots go to test-results/dashboard/ (git-ignored).
import { mkdirSync } from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasChromium, launchChromium, servedHarness, watchProblems } from '../../support/browser.js';
import type { Harness } from '../../support/harness.js';
import { deviceValues, identifyBody } from '../../support/signals.js';

const SHOTS = new URL('../../../test-results/dashboard/', import.meta.url);
const DAY_MS = 86_400_000;

describe.skipIf(!hasChromium)('dashboard in headless Chromium', () => {
  let origin: string;
  let h: Harness;
  let closeService: () => Promise<void>;
  let browser: Browser;
  let context: BrowserContext;
  const problems: string[] = [];

  beforeAll(async () => {
    ({ h, origin, close: closeService } = await servedHarness(import.meta.filename));
    mkdirSync(SHOTS, { recursive: true });
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1200, height: 1000 } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
    // 2026-01-15 12:00 UTC in both: the page computes key ages with the browser's clock.
    await context.clock.setFixedTime(h.clock.now());
  });

  afterAll(async () => {
    await browser?.close();
    await closeService?.();
  });

  const watch = (page: Page) => watchProblems(page, problems);

  const shot = (page: Page, name: string) => page.screenshot({ path: new URL(name, SHOTS).pathname, fullPage: true });

  let seed = 300;
  const identify = (key: string) =>
    fetch(`${origin}/v1/identify`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: JSON.stringify(identifyBody(deviceValues(++seed))),
    });

  const cells = (page: Page, row: string) => page.locator(`${row} td`).allTextContents();
  /** A dashboard page through its navigation link (the page is not reloaded). */
  const openPage = (page: Page, name: string) => page.locator('.dash-nav').getByRole('link', { name, exact: true }).click();

  it('signs up, creates, copies, uses and revokes a key, switches plan, manages projects and signs out', async () => {
    const page = watch(await context.newPage());

    // Not signed in: the dashboard sends people to the login page and back.
    const nav = await page.goto(`${origin}/dashboard`);
    expect(new URL(page.url()).pathname).toBe('/login');
    expect(new URL(page.url()).searchParams.get('next')).toBe('/dashboard');
    expect(nav?.headers()['content-security-policy']).toContain("script-src 'self'");
    expect(await page.textContent('#next-path')).toBe('open the dashboard');
    expect(await page.textContent('footer')).toBe('IP Geolocation by DB-IP');
    await page.getByRole('button', { name: 'Create one', exact: true }).click();
    await page.fill('#email', 'dash-user@example.com');
    await page.fill('#password', 'correct horse battery');
    await shot(page, '01-sign-up.png');
    await page.click('#submit');

    // The dashboard: who, plan, limits, an empty month.
    await page.waitForURL(`${origin}/dashboard`);
    await page.locator('#plan-panel').waitFor({ state: 'visible' });
    expect(await page.textContent('#who')).toContain('Signed in as dash-user@example.com');
    expect(await page.textContent('#plan-name')).toBe('Free');
    expect(await page.textContent('#limit-rps')).toBe('10 per second');
    expect(await page.textContent('#limit-monthly')).toBe('10,000');
    expect(await page.textContent('#usage-count')).toBe('0 of 10,000 (January 2026)');
    expect(await page.textContent('#usage-percent')).toBe('0% used');
    expect(await page.locator('#chart svg title').first().textContent()).toBe('Identify calls with live keys per day, January 2026 (UTC)');
    expect(await page.locator('#chart rect.bar').count()).toBe(0);
    expect(await page.textContent('footer')).toBe('IP Geolocation by DB-IP');
    expect(await page.locator('footer a').getAttribute('href')).toBe('https://db-ip.com');
    await shot(page, '02-dashboard.png');
    await openPage(page, 'Settings');
    expect(await cells(page, '#projects-body tr')).toEqual(['Default project', 'any host', 'Edit']);
    await openPage(page, 'API keys');
    await page.locator('#keys-empty').waitFor({ state: 'visible' });

    // A live key: its value once, with a warning and a working Copy button.
    await page.fill('#key-name', 'Website');
    await page.selectOption('#key-type', 'live');
    await page.getByRole('button', { name: 'Create key', exact: true }).click();
    const field = page.locator('#new-key-value');
    await field.waitFor({ state: 'visible' });
    const key = await field.inputValue();
    expect(key).toMatch(/^svc_live_[0-9A-Za-z]{38}$/);
    expect(await field.getAttribute('readonly')).not.toBeNull();
    expect(await page.textContent('#new-key .warning')).toBe("Copy it now — you won't see it again.");
    await page.getByRole('button', { name: 'Copy', exact: true }).click();
    await expect.poll(() => page.textContent('#copy-status')).toBe('Copied');
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(key);
    await shot(page, '03-key-created.png');

    // The key works through HTTP: two calls yesterday, one today.
    h.clock.advance(-DAY_MS);
    for (let i = 0; i < 2; i++) expect((await identify(key)).status).toBe(200);
    h.clock.advance(DAY_MS);
    expect((await identify(key)).status).toBe(200);

    // Dismissed: gone from the page, listed only by its hint.
    await page.getByRole('button', { name: 'Dismiss', exact: true }).click();
    expect(await field.count()).toBe(0);
    expect(await page.content()).not.toContain(key);
    expect(await cells(page, '#keys-body tr')).toEqual([
      'Website',
      'live',
      `svc_live_…${key.slice(-4)}`,
      'dashboard',
      'active',
      '2026-01-15',
      'never',
      '0 days',
      'Revoke',
    ]);

    // After a reload: the usage of both days, and the key's last use.
    await page.reload();
    await page.locator('#keys-body tr').first().waitFor();
    expect(await page.textContent('#usage-count')).toBe('3 of 10,000 (January 2026)');
    expect(await page.textContent('#usage-percent')).toBe('0.03% used');
    expect(await page.locator('#chart rect.bar title').allTextContents()).toEqual(['2026-01-14: 2 calls with live keys', '2026-01-15: 1 call with live keys']);
    expect(await page.textContent('#chart-caption')).toContain('monthly quota of 10,000: 3 used (0.03%)');
    expect(await page.getAttribute('#chart svg', 'aria-labelledby')).toBe('chart-title chart-desc');
    expect((await cells(page, '#keys-body tr'))[6]).toBe('2026-01-15 12:00 UTC');
    await shot(page, '04-usage.png');

    // Revoke takes a confirmation; Cancel backs out.
    await page.getByRole('button', { name: 'Revoke Website', exact: true }).click();
    await page.getByRole('button', { name: 'Cancel', exact: true }).click();
    expect(await page.getByRole('button', { name: 'Confirm revoke Website', exact: true }).count()).toBe(0);
    await page.getByRole('button', { name: 'Revoke Website', exact: true }).click();
    await shot(page, '05-confirm-revoke.png');
    await page.getByRole('button', { name: 'Confirm revoke Website', exact: true }).click();
    await expect.poll(() => page.textContent('#key-status')).toBe('Revoked “Website”. It no longer works.');
    const revoked = await cells(page, '#keys-body tr');
    expect(revoked[4]).toBe('revoked2026-01-15 12:00 UTC');
    expect(revoked[8]).toBe('');
    const refused = await identify(key);
    expect(refused.status).toBe(401);
    expect(await refused.json()).toEqual({ error: 'Invalid or missing API key', code: expect.any(String) });
    await shot(page, '06-revoked.png');

    // A key created 120 days ago (server clock) is flagged for rotation.
    h.clock.advance(-120 * DAY_MS);
    await page.fill('#key-name', 'Old backend');
    await page.selectOption('#key-type', 'secret');
    await page.getByRole('button', { name: 'Create key', exact: true }).click();
    await page.locator('#new-key-value').waitFor();
    h.clock.advance(120 * DAY_MS);
    await page.getByRole('button', { name: 'Dismiss', exact: true }).click();
    const old = await cells(page, '#keys-body tr:nth-child(2)');
    expect(old.slice(0, 2)).toEqual(['Old backend', 'secret']);
    expect(old[7]).toBe('120 days rotate');
    expect(await page.locator('#keys-body .badge.warn').count()).toBe(1);

    // Switch plan: the limits follow.
    await openPage(page, 'Overview');
    await page.selectOption('#plan-select', 'growth');
    await page.getByRole('button', { name: 'Switch', exact: true }).click();
    await expect.poll(() => page.textContent('#plan-status')).toBe('Switched to Growth.');
    expect(await page.textContent('#plan-name')).toBe('Growth');
    expect(await page.textContent('#limit-monthly')).toBe('250,000');
    expect(await page.textContent('#limit-rps')).toBe('1,000 per second');
    expect(await page.textContent('#usage-count')).toBe('3 of 250,000 (January 2026)');
    await shot(page, '07-plan-growth.png');

    // Projects: the API's validation error inline, then a real one, then an edit.
    await openPage(page, 'Settings');
    await page.fill('#project-name', 'Shop');
    await page.fill('#project-domains', 'shop.example.com, https://bad.example');
    await page.getByRole('button', { name: 'Create project', exact: true }).click();
    await expect.poll(() => page.textContent('#project-error')).toMatch(/^allowedDomains\.1: must be a host name .*\(“https:\/\/bad\.example”\)$/);
    await shot(page, '08-project-error.png');
    await page.fill('#project-domains', 'Shop.Example.com\n*.example.org');
    await page.getByRole('button', { name: 'Create project', exact: true }).click();
    await expect.poll(() => cells(page, '#projects-body tr:nth-child(2)')).toEqual(['Shop', 'shop.example.com, *.example.org', 'Edit']);
    expect(await page.isHidden('#project-error')).toBe(true);
    expect(await page.locator('#project option').allTextContents()).toEqual(['Default project', 'Shop']);
    await page.getByRole('button', { name: 'Edit Shop', exact: true }).click();
    expect(await page.inputValue('#edit-domains')).toBe('shop.example.com\n*.example.org');
    await page.fill('#edit-name', 'Shop EU');
    await page.fill('#edit-domains', 'eu.shop.example.com');
    // The linkedId setting is on by default; turned off here, and the form shows it so next time.
    expect(await page.isChecked('#edit-linked')).toBe(true);
    await page.getByLabel('Use the linkedId as evidence').uncheck();
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await expect.poll(() => cells(page, '#projects-body tr:nth-child(2)')).toEqual(['Shop EU', 'eu.shop.example.com', 'Edit']);
    expect(await page.isHidden('#edit-form')).toBe(true);
    await page.getByRole('button', { name: 'Edit Shop EU', exact: true }).click();
    expect(await page.isChecked('#edit-linked')).toBe(false);
    await page.getByRole('button', { name: 'Cancel', exact: true }).click();
    // The new project has its own (empty) key list; the address names it.
    await openPage(page, 'API keys');
    await page.selectOption('#project', { label: 'Shop EU' });
    await page.waitForURL(/\/dashboard\/keys\?project=prj_/);
    await expect.poll(() => page.isVisible('#keys-empty')).toBe(true);
    expect(await page.locator('#keys-body tr').count()).toBe(0);
    await shot(page, '09-projects.png');

    // Sign out: back to the login page, and the dashboard needs signing in again.
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.waitForURL(`${origin}/login`);
    await page.goto(`${origin}/dashboard`);
    expect(new URL(page.url()).pathname).toBe('/login');
    await shot(page, '10-signed-out.png');
    await page.close();
    expect(problems).toEqual([]);
  });

  it('lands on the dashboard after signing up without a `next`, and shows hostile names as text', async () => {
    const page = watch(await context.newPage());
    await page.goto(`${origin}/login`);
    expect(await page.isHidden('#context')).toBe(true);
    await page.getByRole('button', { name: 'Create one', exact: true }).click();
    await page.fill('#email', 'hostile@example.com');
    await page.fill('#password', 'correct horse battery');
    await page.click('#submit');
    await page.waitForURL(`${origin}/dashboard`);
    const hostile = '<img src=x onerror="window.__pwned=1">Evil & Co';
    await openPage(page, 'Settings');
    await page.fill('#project-name', hostile);
    await page.getByRole('button', { name: 'Create project', exact: true }).click();
    await page.locator('#projects-body tr').nth(1).waitFor();
    await openPage(page, 'API keys');
    await page.fill('#key-name', hostile);
    await page.getByRole('button', { name: 'Create key', exact: true }).click();
    await page.getByRole('button', { name: 'Dismiss', exact: true }).click();
    await expect.poll(() => page.locator('#projects-body tr:nth-child(2) td').first().textContent()).toBe(hostile);
    expect(await page.locator('#keys-body td').first().textContent()).toBe(hostile);
    expect(await page.locator('main img').count()).toBe(0);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    await shot(page, '11-hostile-names.png');
    await page.close();
    expect(problems).toEqual([]);
  });
});
