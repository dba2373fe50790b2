// Every dashboard page in headless Chromium against the real service and
// database: each page loaded by its own address at 1280 and 390 px (a
// screenshot of each in test-results/dashboard-pages/, no horizontal
// scrolling at 390 px, axe-core finding no serious or critical violation),
// deep links surviving reload and Back/Forward, links between pages without
// reloading, and the install page's proxy secret shown exactly once.
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VIEWS, type View } from '../../../server/pages/dashboard/views.js';
import { hasChromium, launchChromium, servedHarness, watchProblems } from '../../support/browser.js';
import type { Harness } from '../../support/harness.js';
import { deviceValues, identifyBody } from '../../support/signals.js';

const SHOTS = new URL('../../../test-results/dashboard-pages/', import.meta.url);
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

describe.skipIf(!hasChromium)('the dashboard, a page per job', () => {
  let origin: string;
  let h: Harness;
  let closeService: () => Promise<void>;
  let browser: Browser;
  let signedIn: Awaited<ReturnType<BrowserContext['storageState']>>;
  let projectId: string;
  let visitorId: string;
  const problems: string[] = [];

  beforeAll(async () => {
    ({ h, origin, close: closeService } = await servedHarness(import.meta.filename, { TRUST_PROXY: '127.0.0.1/32,::1' }));
    mkdirSync(SHOTS, { recursive: true });
    browser = await launchChromium();

    // The instance's first account (its administrator), signed up on the login page.
    const context = await browser.newContext();
    const page = watchProblems(await context.newPage(), problems);
    await page.goto(`${origin}/login?next=${encodeURIComponent('/dashboard/keys')}`);
    await page.getByRole('button', { name: 'Create one', exact: true }).click();
    await page.fill('#email', 'pages-admin@example.com');
    await page.fill('#password', 'correct horse battery');
    await page.click('#submit');
    // The deep link asked for before signing in is where sign-in leads.
    await page.waitForURL(`${origin}/dashboard/keys`, { timeout: 60_000 });
    await page.locator('#keys-empty').waitFor({ state: 'visible' });
    signedIn = await context.storageState();

    // Traffic: a live key and three identifications of two devices.
    projectId = ((await (await context.request.get(`${origin}/api/projects`)).json()) as { projects: { id: string }[] }).projects[0]!.id;
    const created = await context.request.post(`${origin}/api/projects/${projectId}/keys`, { headers: { origin }, data: { name: 'site', type: 'live' } });
    const live = ((await created.json()) as { key: string }).key;
    for (const [seed, linkedId] of [
      [501, 'user-1'],
      [501, 'user-2'],
      [502, undefined],
    ] as const) {
      const res = await request(h.app)
        .post('/v1/identify')
        .set('X-API-Key', live)
        .set('X-Forwarded-For', '86.8.23.155')
        .send(identifyBody(deviceValues(seed), linkedId ? { linkedId } : {}));
      expect(res.status).toBe(200);
      visitorId ??= res.body.visitorId;
    }
    await context.close();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await closeService?.();
  });

  const address = (view: View) => (view === 'visitor' ? `${VIEWS.visitor.path}/${visitorId}` : VIEWS[view].path);
  const heading = (page: Page, view: View) => page.locator(`#view-${view} h1`);
  /** A signed-in browser whose clock is the service's (the overview's last 24 hours). */
  const signedInContext = async (width = 1280) => {
    const context = await browser.newContext({ storageState: signedIn, viewport: { width, height: 900 } });
    await context.clock.setFixedTime(h.clock.now());
    return context;
  };

  async function axe(page: Page): Promise<AxeViolation[]> {
    // Evaluated over the DevTools protocol, which the page's CSP (script-src 'self') does not govern.
    await page.evaluate(AXE);
    const violations = await page.evaluate(async () => {
      const result = await (window as unknown as { axe: { run: (o: unknown) => Promise<{ violations: unknown[] }> } }).axe.run({
        resultTypes: ['violations'],
      });
      return result.violations;
    });
    return (violations as AxeViolation[]).filter((v) => v.impact === 'serious' || v.impact === 'critical');
  }

  for (const width of [1280, 390]) {
    it(`every page at ${width} px: its own address, its content, screenshot, axe, ${width === 390 ? 'no horizontal scrolling' : 'the navigation'}`, async () => {
      const context = await signedInContext(width);
      const page = watchProblems(await context.newPage(), problems);
      const ready: Record<View, () => Promise<unknown>> = {
        overview: () => page.locator('#day-charts figure').first().waitFor(),
        events: () => page.locator('#events-body tr').nth(2).waitFor(),
        visitor: () => page.locator('#visits-body tr').first().waitFor(),
        rules: () => page.locator('#rules-empty').waitFor({ state: 'visible' }),
        lists: () => page.locator('#lists-empty').waitFor({ state: 'visible' }),
        reviews: () => page.locator('#reviews-empty').waitFor({ state: 'visible' }),
        install: () => page.locator('#proxy-traffic', { hasText: 'identify calls' }).waitFor(),
        keys: () => page.locator('#keys-body tr').first().waitFor(),
        webhooks: () => page.locator('#hooks-empty').waitFor({ state: 'visible' }),
        sealing: () => page.locator('#sealing-state', { hasText: 'Off' }).waitFor(),
        settings: () => page.locator('#projects-body tr').first().waitFor(),
        members: () => page.locator('#members-body tr').first().waitFor(),
        audit: () => page.locator('#audit-body tr').first().waitFor(),
        instance: () => Promise.all([page.locator('#accounts-body tr').first().waitFor(), page.locator('#plans-body tr').nth(3).waitFor()]),
      };
      for (const view of Object.keys(VIEWS) as View[]) {
        const res = await page.goto(`${origin}${address(view)}`);
        expect(res?.status(), view).toBe(200);
        await ready[view]();
        expect(await heading(page, view).isVisible(), view).toBe(true);
        expect(await page.title()).toBe(`${VIEWS[view].title} · Dashboard · deviceid`);
        // Exactly one page shown, and the navigation marks it.
        expect(await page.locator('.view:not([hidden])').count(), view).toBe(1);
        expect(await page.locator('.dash-nav a[aria-current="page"]').getAttribute('data-view')).toBe(view);
        await page.screenshot({ path: new URL(`${view}-${width}.png`, SHOTS).pathname, fullPage: true });
        if (width === 390) {
          const [scroll, inner] = await page.evaluate(() => [document.scrollingElement!.scrollWidth, window.innerWidth]);
          expect(scroll, `${view} is ${scroll}px wide at ${inner}px`).toBeLessThanOrEqual(inner);
        }
        const violations = await axe(page);
        expect(
          violations.map((v) => `${v.impact} ${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`),
          view,
        ).toEqual([]);
      }
      // The Instance page's plans, with their limits (the defaults).
      await page.goto(`${origin}/dashboard/instance`);
      await page.locator('#plans-body tr').nth(3).waitFor();
      const plans = await page.locator('#plans-body tr').evaluateAll((rows) => rows.map((r) => Array.from(r.children, (td) => td.textContent)));
      expect(plans).toEqual([
        ['Free', '10', '10,000'],
        ['Builder', '1,000', '50,000'],
        ['Growth', '1,000', '250,000'],
        ['Scale', '1,000', '2,000,000'],
      ]);
      // The last-24-hours figures of the overview count the three identifications.
      await page.goto(`${origin}/dashboard`);
      await page.locator('#day-charts figure').first().waitFor();
      expect(await page.locator('#day-charts figcaption').first().textContent()).toBe('3 Identifications');
      await context.close();
      expect(problems).toEqual([]);
    }, 180_000);
  }

  it('deep links survive reload and Back/Forward; links move between pages without reloading', async () => {
    const context = await signedInContext();
    const page = watchProblems(await context.newPage(), problems);
    // A search in the address: the form and the list follow it, also after a reload.
    await page.goto(`${origin}/dashboard/events?project=${projectId}&linkedId=user-2&tor=false`);
    await page.locator('#events-body tr').first().waitFor();
    expect(await page.locator('#events-body tr').count()).toBe(1);
    expect(await page.inputValue('#f-linkedId')).toBe('user-2');
    expect(await page.inputValue('#f-tor')).toBe('false');
    await page.reload();
    await page.locator('#events-body tr').first().waitFor();
    expect(await page.locator('#events-body tr').count()).toBe(1);
    expect(await page.inputValue('#f-linkedId')).toBe('user-2');

    // A filter set in the form goes into the address; a bad one is refused next to the form.
    await page.evaluate(() => ((window as unknown as { marker: number }).marker = 1));
    await page.fill('#f-linkedId', '');
    await page.fill('#f-ip', '86.8.23');
    await page.getByRole('button', { name: 'Filter', exact: true }).click();
    await page.locator('#events-error').waitFor({ state: 'visible' });
    expect(await page.textContent('#events-error')).toMatch(/^ip: must be an IP address or a CIDR/);
    expect(new URL(page.url()).searchParams.get('ip')).toBe('86.8.23');
    await page.fill('#f-ip', '86.8.23.0/24');
    await page.fill('#f-country', 'gb');
    await page.getByRole('button', { name: 'Filter', exact: true }).click();
    await expect.poll(() => page.locator('#events-body tr').count()).toBe(3);
    expect(await page.isHidden('#events-error')).toBe(true);

    // A visitor id is a link to its page; Back returns to the search, Forward to the visitor.
    await page.locator(`#events-body a[href*="${visitorId}"]`).first().click();
    await page.waitForURL(`${origin}/dashboard/visitors/${visitorId}?project=${projectId}`);
    await page.locator('#visits-body tr').first().waitFor();
    await expect.poll(() => page.textContent('#visitor-linked')).toBe('user-1, user-2');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('visitor-title');
    await page.goBack();
    await page.locator('#view-events').waitFor({ state: 'visible' });
    expect(new URL(page.url()).searchParams.get('country')).toBe('gb');
    expect(await page.inputValue('#f-country')).toBe('gb');
    await page.goForward();
    await page.locator('#view-visitor').waitFor({ state: 'visible' });
    expect(await page.textContent('#visitor-id')).toBe(visitorId);
    // None of that reloaded the page.
    expect(await page.evaluate(() => (window as unknown as { marker?: number }).marker)).toBe(1);

    // The navigation is links: keyboard and a reload of any of them work.
    await page.getByRole('link', { name: 'Webhooks', exact: true }).focus();
    await page.keyboard.press('Enter');
    await page.waitForURL(`${origin}/dashboard/webhooks?project=${projectId}`);
    await page.reload();
    await page.locator('#hooks-empty').waitFor({ state: 'visible' });
    expect(await page.locator('.dash-nav a[aria-current="page"]').textContent()).toBe('Webhooks');

    // An address the dashboard does not have is a 404, not the dashboard.
    expect((await page.goto(`${origin}/dashboard/nope`))?.status()).toBe(404);
    await context.close();
    expect(problems).toEqual([]);
  }, 120_000);

  it('deletes a visitor from its page after a confirmation', async () => {
    const context = await signedInContext();
    const page = watchProblems(await context.newPage(), problems);
    const events = (await (await context.request.get(`${origin}/api/projects/${projectId}/events`)).json()) as { events: { visitorId: string }[] };
    const doomed = events.events.map((e) => e.visitorId).find((id) => id !== visitorId)!;
    await page.goto(`${origin}/dashboard/visitors/${doomed}`);
    await page.locator('#forget-panel').waitFor({ state: 'visible' });
    await page.getByRole('button', { name: 'Delete visitor data', exact: true }).click();
    await page.getByRole('button', { name: 'Confirm delete', exact: true }).click();
    await page.locator('#forget-status', { hasText: `Deleting ${doomed}` }).waitFor();
    await (h.app.locals.services as { deletions: { idle(): Promise<void> } }).deletions.idle();
    await page.reload();
    await page.locator('#visitor-error', { hasText: 'Visitor not found' }).waitFor();
    await context.close();
    expect(problems).toEqual([]);
  }, 60_000);

  it('the install page creates a proxy secret and shows it once, in the setup too, then only its hint', async () => {
    const context = await signedInContext();
    const page = watchProblems(await context.newPage(), problems);
    await page.goto(`${origin}/dashboard/install`);
    await page.locator('#proxy-state', { hasText: 'Off' }).waitFor();
    // The traffic loads on its own, after the state or before it.
    await page.locator('#proxy-traffic', { hasText: 'identify calls' }).waitFor();
    expect(await page.textContent('#proxy-traffic')).toBe('0 of 3 identify calls in the last 24 hours came through a proxy (0%).');
    expect(await page.textContent('#proxy-last-error')).toBe('No proxy errors.');
    await page.getByRole('button', { name: 'Create secret', exact: true }).click();
    const field = page.locator('#proxy-secret-value');
    await field.waitFor();
    const secret = await field.inputValue();
    expect(secret).toMatch(/^svc_proxy_/);
    expect(await page.textContent('#proxy-secret .warning')).toBe("Copy it now — you won't see it again.");
    expect(await page.textContent('#proxy-state')).toContain(`On: secret ${secret.slice(0, 10)}`);
    // Each setup carries it and this service's address.
    for (const kind of ['nginx', 'caddy', 'nextjs', 'express', 'worker']) {
      await page.selectOption('#proxy-kind', kind);
      const setup = await page.inputValue('#snippet-proxy');
      expect(setup, kind).toContain(secret);
      expect(setup, kind).toContain(origin);
    }
    await page.screenshot({ path: new URL('install-proxy-secret.png', SHOTS).pathname, fullPage: true });
    await page.locator('#proxy-secret').getByRole('button', { name: 'Dismiss' }).click();
    expect(await page.locator('#proxy-secret-value').count()).toBe(0);
    expect(await page.inputValue('#snippet-proxy')).toContain(secret); // still in the setup, for this visit only
    // Never again: a reload shows only its hint.
    await page.reload();
    await page.locator('#proxy-state', { hasText: 'On' }).waitFor();
    expect(await page.content()).not.toContain(secret);
    expect(await page.inputValue('#snippet-proxy')).not.toContain(secret);
    expect(await page.inputValue('#snippet-proxy')).toContain('svc_proxy_YOUR_SECRET');
    expect(await page.textContent('#proxy-create')).toBe('Rotate secret');
    await context.close();
    expect(problems).toEqual([]);
  }, 60_000);
});
