// The dashboard's events explorer and visitor timeline in headless Chromium:
// devices identified with the project's key show as the newest events;
// filters by visitor, linkedId, bot and suspect (a bad filter's error next to
// the form); Load more; a row's full event as JSON, named in the address;
// a visitor id opens its timeline (Older visits, Back to events and the browser's Back); all of it
// again at 390 px without horizontal scrolling. A visitor's page lists its
// related visitors in the chosen project (the same machine's other browsers)
// with their evidence, each linked to its own page, More, an empty state and
// the project choice; axe-core finds no serious or critical violation there
// at 1280 and 390 px. Screenshots go to test-results/explorer/ (git-ignored).
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasChromium, launchChromium, servedHarness, watchProblems } from '../../support/browser.js';
import type { Harness } from '../../support/harness.js';
import { deviceValues, identifyBody, inEdge, inFirefox } from '../../support/signals.js';

const SHOTS = new URL('../../../test-results/explorer/', import.meta.url);
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

type V = ReturnType<typeof deviceValues>;
/**
 * What Chrome sends with the agent's request, names capitalised as on the
 * wire (Node's fetch lowercases them, a shape the bot verdict counts).
 */
const BROWSER_HEADERS = {
  'sec-ch-ua': '"Chromium";v="130", "Google Chrome";v="130", "Not?A_Brand";v="99"',
  'sec-ch-ua-mobile': '?0',
  'sec-ch-ua-platform': '"Windows"',
  'User-Agent': 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36',
  Accept: '*/*',
  'Sec-Fetch-Site': 'same-site',
  'Sec-Fetch-Mode': 'cors',
  'Sec-Fetch-Dest': 'empty',
  'Accept-Encoding': 'gzip, deflate, br, zstd',
  'Accept-Language': 'en-US,en;q=0.9',
};
const headless = (v: V): V => ({ ...v, automation: { ...v.automation, webdriver: true, headlessUserAgent: true } });

describe.skipIf(!hasChromium)('the events explorer and visitor timeline in the dashboard', () => {
  let origin: string;
  let h: Harness;
  let closeService: () => Promise<void>;
  let browser: Browser;
  let signedIn: Awaited<ReturnType<BrowserContext['storageState']>>;
  const problems: string[] = [];
  const ids: Record<string, { requestId: string; visitorId: string }> = {};

  beforeAll(async () => {
    ({
      h,
      origin,
      close: closeService,
    } = await servedHarness(import.meta.filename, { TRUST_PROXY: '127.0.0.1/32,::1', PLANS: '{"free":{"rps":100000,"monthly":1000000}}' }));
    mkdirSync(SHOTS, { recursive: true });
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await closeService?.();
  });

  const shot = (page: Page, name: string) => page.screenshot({ path: new URL(name, SHOTS).pathname, fullPage: true });
  /** The panel alone, where the full page would make it small. */
  const panelShot = (page: Page, id: string, name: string) => page.locator(`#${id}`).screenshot({ path: new URL(name, SHOTS).pathname });
  /** No horizontal scrolling: the document is no wider than the viewport. */
  const noSideScroll = async (page: Page) => {
    const [scroll, client] = await page.evaluate(() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]);
    expect(scroll, `${page.url()} is ${scroll}px wide in a ${client}px viewport`).toBeLessThanOrEqual(client);
  };
  /** axe-core's serious and critical violations on the page as it is. */
  const axe = async (page: Page) => {
    // Evaluated over the DevTools protocol, which the page's CSP (script-src 'self') does not govern.
    await page.evaluate(AXE);
    const violations = (await page.evaluate(async () => {
      const result = await (window as unknown as { axe: { run: (o: unknown) => Promise<{ violations: unknown[] }> } }).axe.run({
        resultTypes: ['violations'],
      });
      return result.violations;
    })) as { id: string; impact: string | null; help: string; nodes: { target: string[] }[] }[];
    return violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.impact} ${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`);
  };
  const rows = (page: Page, body = 'events-body') => page.locator(`#${body} tr`);
  const shownIds = (page: Page) => page.locator('#events-body tr').evaluateAll((trs) => trs.map((tr) => (tr as HTMLElement).dataset.requestId));
  const req = (...names: string[]) => names.map((n) => ids[n]!.requestId);

  async function identify(name: string, key: string, ip: string, v: V, extra: Record<string, unknown> = {}) {
    h.clock.advance(60_000);
    const res = await request(h.app).post('/v1/identify').set(BROWSER_HEADERS).set('X-API-Key', key).set('X-Forwarded-For', ip).send(identifyBody(v, extra));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    ids[name] = res.body as { requestId: string; visitorId: string };
  }

  it('lists, filters and pages the newest events, shows one as JSON and a visitor timeline (1280 px)', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    // The page's clock is the service's (key ages).
    await context.clock.setFixedTime(h.clock.now());
    const page = watchProblems(await context.newPage(), problems);
    await page.goto(`${origin}/login?next=%2Fdashboard%2Fevents`);
    await page.getByRole('button', { name: 'Create one', exact: true }).click();
    await page.fill('#email', 'explorer-user@example.com');
    await page.fill('#password', 'correct horse battery');
    await page.click('#submit');
    await page.waitForURL(`${origin}/dashboard/events`, { timeout: 60_000 });
    // A new project has no events yet: the empty state says what to do.
    await page.locator('#events-empty', { hasText: 'No identifications in this project yet' }).waitFor();
    expect(await page.textContent('#events-title')).toBe('Events');

    // Keys through the dashboard API (same session), then devices identified with the browser key.
    const projectId = ((await (await context.request.get(`${origin}/api/projects`)).json()) as { projects: { id: string }[] }).projects[0]!.id;
    const newKey = async (type: string) => {
      const res = await context.request.post(`${origin}/api/projects/${projectId}/keys`, { headers: { origin }, data: { name: type, type } });
      expect(res.status()).toBe(201);
      return ((await res.json()) as { key: string }).key;
    };
    const live = await newKey('live');
    const secret = await newKey('secret');
    const a = deviceValues(901);
    await identify('a1', live, '8.8.8.8', a);
    await identify('a2', live, '8.8.8.8', a, { linkedId: 'user-1' });
    await identify('b', live, '86.8.23.155', deviceValues(902), { linkedId: 'user-1' });
    await identify('bad', live, '8.9.10.11', headless(deviceValues(903)));
    await request(h.app).patch(`/v1/events/${ids.b!.requestId}`).set('Authorization', `Bearer ${secret}`).send({ suspect: true }).expect(200);

    await page.reload();
    await rows(page).nth(3).waitFor();
    expect(await shownIds(page)).toEqual(req('bad', 'b', 'a2', 'a1'));
    expect(await page.textContent('#events-status')).toBe('4 events.');
    const bRow = page.locator(`#events-body tr[data-request-id="${ids.b!.requestId}"]`);
    const bText = await bRow.textContent();
    for (const part of [ids.b!.visitorId, 'Chrome 130 on Windows', '86.8.23.155', 'GB', 'no bot', 'suspect', 'linkedId user-1']) expect(bText).toContain(part);
    expect(await page.locator(`#events-body tr[data-request-id="${ids.bad!.requestId}"] .badge.warn`).textContent()).toBe('bad bot');
    expect(await page.locator('#events-more').isVisible()).toBe(false);
    await shot(page, '30-explorer.png');
    await panelShot(page, 'events-panel', '31-explorer-panel.png');

    // Filters: by visitor (the device's two events), linkedId, bot, suspect; a bad value's error by the form.
    await page.fill('#f-visitorId', ids.a1!.visitorId);
    await page.getByRole('button', { name: 'Filter', exact: true }).click();
    await page.waitForFunction(() => document.querySelectorAll('#events-body tr').length === 2);
    expect(await shownIds(page)).toEqual(req('a2', 'a1'));
    await panelShot(page, 'events-panel', '32-explorer-visitor-filter.png');
    await page.fill('#f-visitorId', 'nope');
    await page.getByRole('button', { name: 'Filter', exact: true }).click();
    await page.locator('#events-error').waitFor({ state: 'visible' });
    expect(await page.textContent('#events-error')).toMatch(/^visitorId: must be iq_ followed by a ULID/);
    expect(await rows(page).count()).toBe(0);
    await panelShot(page, 'events-panel', '33-explorer-bad-filter.png');
    await page.getByRole('button', { name: 'Clear', exact: true }).click();
    await rows(page).nth(3).waitFor();
    expect(await page.locator('#events-error').isVisible()).toBe(false);
    await page.fill('#f-linkedId', 'user-1');
    await page.getByRole('button', { name: 'Filter', exact: true }).click();
    await page.waitForFunction(() => document.querySelectorAll('#events-body tr').length === 2);
    expect(await shownIds(page)).toEqual(req('b', 'a2'));
    await page.getByRole('button', { name: 'Clear', exact: true }).click();
    await page.selectOption('#f-bot', 'bad');
    await page.getByRole('button', { name: 'Filter', exact: true }).click();
    await page.waitForFunction(() => document.querySelectorAll('#events-body tr').length === 1);
    expect(await shownIds(page)).toEqual(req('bad'));
    await page.selectOption('#f-bot', '');
    await page.selectOption('#f-suspect', 'true');
    await page.getByRole('button', { name: 'Filter', exact: true }).click();
    await page.locator(`#events-body tr[data-request-id="${ids.b!.requestId}"]`).waitFor();
    expect(await shownIds(page)).toEqual(req('b'));
    await page.fill('#f-linkedId', 'nobody');
    await page.getByRole('button', { name: 'Filter', exact: true }).click();
    await page.locator('#events-empty', { hasText: 'No events match these filters' }).waitFor();
    await page.getByRole('button', { name: 'Clear', exact: true }).click();
    await rows(page).nth(3).waitFor();

    // A row opens its full event, read with the session.
    await bRow.locator('td').nth(4).click();
    await page.locator('#event-detail').waitFor({ state: 'visible' });
    await page.locator('#event-json', { hasText: '"requestId"' }).waitFor();
    const event = JSON.parse((await page.textContent('#event-json'))!);
    expect(event).toMatchObject({ requestId: ids.b!.requestId, visitorId: ids.b!.visitorId, linkedId: 'user-1', suspect: true, ip: '86.8.23.155' });
    expect(Object.keys(event.signals.client).length).toBeGreaterThan(30);
    expect(await bRow.getAttribute('class')).toContain('selected');
    await shot(page, '34-explorer-event.png');
    await page.getByRole('button', { name: 'Close', exact: true }).click();
    expect(await page.locator('#event-detail').isVisible()).toBe(false);

    // More than a page: Load more adds the older ones.
    const c = deviceValues(904);
    for (let i = 0; i < 21; i++) await identify(`c${i}`, live, '86.8.23.155', c);
    await page.getByRole('button', { name: 'Clear', exact: true }).click();
    await page.waitForFunction(() => document.querySelectorAll('#events-body tr').length === 20);
    expect(await page.textContent('#events-status')).toBe('20 events; there may be more.');
    await page.getByRole('button', { name: 'Load more' }).click();
    await page.waitForFunction(() => document.querySelectorAll('#events-body tr').length === 25);
    expect((await shownIds(page)).slice(-4)).toEqual(req('bad', 'b', 'a2', 'a1'));
    expect(new Set(await shownIds(page)).size).toBe(25);
    expect(await page.locator('#events-more').isVisible()).toBe(false);

    // A visitor id opens its page: its visits newest first, then older ones.
    await page
      .getByRole('link', { name: `Visitor ${ids.c0!.visitorId}` })
      .first()
      .click();
    await page.locator('#visitor-panel').waitFor({ state: 'visible' });
    await rows(page, 'visits-body').nth(19).waitFor();
    expect(new URL(page.url()).pathname).toBe(`/dashboard/visitors/${ids.c0!.visitorId}`);
    expect(await page.locator('#events-panel').isVisible()).toBe(false);
    expect(await page.textContent('#visitor-id')).toBe(ids.c0!.visitorId);
    expect(await page.textContent('#visitor-total')).toBe('21');
    const firstVisit = await rows(page, 'visits-body').first().textContent();
    for (const part of ['GB', 'Virgin Media', 'Chrome 130 on Windows']) expect(firstVisit).toContain(part);
    await page.getByRole('button', { name: 'Older visits' }).click();
    await rows(page, 'visits-body').nth(20).waitFor();
    expect(await page.locator('#visits-more').isVisible()).toBe(false);
    await shot(page, '35-visitor-timeline.png');
    await panelShot(page, 'visitor-panel', '36-visitor-timeline-panel.png');

    // The browser's Back returns to the events (the first page again: the address holds the search, not how far it was read).
    await page.goBack();
    await page.locator('#events-panel').waitFor({ state: 'visible' });
    await rows(page).nth(19).waitFor();
    await page.getByRole('button', { name: 'Load more' }).click();
    await rows(page).nth(24).waitFor();
    await page
      .getByRole('link', { name: `Visitor ${ids.a1!.visitorId}` })
      .first()
      .click();
    await rows(page, 'visits-body').nth(1).waitFor();
    expect(await rows(page, 'visits-body').count()).toBe(2);
    // "Its events" is the events page filtered by this visitor.
    await page.getByRole('link', { name: 'Its events (with IP addresses)' }).click();
    await page.locator('#events-panel').waitFor({ state: 'visible' });
    await page.waitForFunction(() => document.querySelectorAll('#events-body tr').length === 2);
    expect(await page.inputValue('#f-visitorId')).toBe(ids.a1!.visitorId);
    expect(new URL(page.url()).searchParams.get('visitorId')).toBe(ids.a1!.visitorId);

    // A visitor's address works on its own (a reload, a shared address).
    await page.goto(`${origin}/dashboard/visitors/${ids.b!.visitorId}`);
    await rows(page, 'visits-body').first().waitFor();
    expect(await page.textContent('#visitor-id')).toBe(ids.b!.visitorId);

    signedIn = await context.storageState();
    await context.close();
    expect(problems).toEqual([]);
  }, 180_000);

  it('fits 390 px: the table, the event JSON and the timeline without horizontal scrolling', async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, storageState: signedIn });
    await context.clock.setFixedTime(h.clock.now());
    const page = watchProblems(await context.newPage(), problems);
    await page.goto(`${origin}/dashboard/events`);
    await rows(page).nth(19).waitFor();
    await page.locator('#events-panel').scrollIntoViewIfNeeded();
    await noSideScroll(page);
    await shot(page, '40-explorer-390.png');
    await panelShot(page, 'events-panel', '41-explorer-panel-390.png');

    await page.fill('#f-visitorId', ids.b!.visitorId);
    await page.getByRole('button', { name: 'Filter', exact: true }).click();
    await page.waitForFunction(() => document.querySelectorAll('#events-body tr').length === 1);
    await page.getByRole('button', { name: `full event ${ids.b!.requestId}` }).click();
    await page.locator('#event-json', { hasText: '"requestId"' }).waitFor();
    await noSideScroll(page);
    await panelShot(page, 'events-panel', '42-explorer-event-390.png');

    await page.getByRole('link', { name: `Visitor ${ids.b!.visitorId}` }).click();
    await rows(page, 'visits-body').first().waitFor();
    await noSideScroll(page);
    await panelShot(page, 'visitor-panel', '43-visitor-timeline-390.png');
    await context.close();
    expect(problems).toEqual([]);
  }, 120_000);

  it('names the open event in the address: a reload or a shared link opens it, Close removes it, Back and Forward step through it', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, storageState: signedIn });
    await context.clock.setFixedTime(h.clock.now());
    const page = watchProblems(await context.newPage(), problems);
    const openId = () => new URL(page.url()).searchParams.get('event');
    const shownEvent = async () => {
      await page.locator('#event-json', { hasText: '"requestId"' }).waitFor();
      return (JSON.parse((await page.textContent('#event-json'))!) as { requestId: string }).requestId;
    };
    const selectedIds = () => page.locator('#events-body tr.selected').evaluateAll((trs) => trs.map((tr) => (tr as HTMLElement).dataset.requestId));
    const [b, a1] = req('b', 'a1');

    const projectId = ((await (await context.request.get(`${origin}/api/projects`)).json()) as { projects: { id: string }[] }).projects[0]!.id;
    await page.goto(`${origin}/dashboard/events?project=${projectId}`);
    await rows(page).nth(19).waitFor();
    await page.getByRole('button', { name: 'Load more' }).click();
    await rows(page).nth(24).waitFor();
    await page.evaluate(() => ((window as unknown as { marker: number }).marker = 1));

    // Opening events from the list (b and a1 are on the second page) names each in the address.
    await page.getByRole('button', { name: `full event ${b}` }).click();
    expect(await shownEvent()).toBe(b);
    expect(openId()).toBe(b);
    expect(new URL(page.url()).searchParams.get('project')).toBe(projectId);
    await page.getByRole('button', { name: `full event ${a1}` }).click();
    await expect.poll(shownEvent).toBe(a1);
    expect(openId()).toBe(a1);

    // Back and Forward open and close them again, over the list as it was read (25 rows, no reload).
    await page.goBack();
    await expect.poll(shownEvent).toBe(b);
    expect(openId()).toBe(b);
    expect(await selectedIds()).toEqual([b]);
    await page.goBack();
    await page.locator('#event-detail').waitFor({ state: 'hidden' });
    expect(openId()).toBeNull();
    expect(await selectedIds()).toEqual([]);
    await page.goForward();
    await expect.poll(shownEvent).toBe(b);
    expect(await rows(page).count()).toBe(25);
    expect(await page.evaluate(() => (window as unknown as { marker?: number }).marker)).toBe(1);

    // Close removes it from the address; Back opens it again.
    await page.getByRole('button', { name: 'Close', exact: true }).click();
    expect(await page.locator('#event-detail').isVisible()).toBe(false);
    expect(openId()).toBeNull();
    await page.goBack();
    await expect.poll(shownEvent).toBe(b);

    // A reload opens the event the address names.
    await page.reload();
    expect(await shownEvent()).toBe(b);
    expect(openId()).toBe(b);

    // A shared link: the search and the open event together.
    const link = `${origin}/dashboard/events?visitorId=${ids.a1!.visitorId}&event=${ids.a2!.requestId}`;
    await page.goto(link);
    await page.waitForFunction(() => document.querySelectorAll('#events-body tr').length === 2);
    expect(await shownEvent()).toBe(ids.a2!.requestId);
    expect(await selectedIds()).toEqual([ids.a2!.requestId]);
    await shot(page, '37-explorer-event-in-address.png');
    // A new search closes the event.
    await page.getByRole('button', { name: 'Filter', exact: true }).click();
    await page.locator('#event-detail').waitFor({ state: 'hidden' });
    expect(openId()).toBeNull();
    await context.close();
    expect(problems).toEqual([]);
  }, 120_000);

  it('names bots: the explorer shows name, category and identity, filters by them, and the Overview counts bots by category', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await context.clock.setFixedTime(h.clock.now());
    const page = watchProblems(await context.newPage(), problems);
    await page.goto(`${origin}/login?next=%2Fdashboard%2Fevents`);
    await page.getByRole('button', { name: 'Create one', exact: true }).click();
    await page.fill('#email', 'bots-user@example.com');
    await page.fill('#password', 'correct horse battery');
    await page.click('#submit');
    await page.waitForURL(`${origin}/dashboard/events`, { timeout: 60_000 });
    const projectId = ((await (await context.request.get(`${origin}/api/projects`)).json()) as { projects: { id: string }[] }).projects[0]!.id;
    const res = await context.request.post(`${origin}/api/projects/${projectId}/keys`, { headers: { origin }, data: { name: 'live', type: 'live' } });
    const live = ((await res.json()) as { key: string }).key;
    const googlebot = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
    const crawl = async (name: string, ip: string) => {
      h.clock.advance(60_000);
      const r = await request(h.app)
        .post('/v1/identify')
        .set({ ...BROWSER_HEADERS, 'User-Agent': googlebot })
        .set('X-API-Key', live)
        .set('X-Forwarded-For', ip)
        .send(identifyBody(deviceValues(950)));
      expect(r.status).toBe(200);
      ids[name] = r.body as { requestId: string; visitorId: string };
    };
    // From Google's published ranges, and the same name from a home network.
    await crawl('crawler', '192.178.4.10');
    await crawl('spoofer', '81.2.69.40');
    await identify('automation', live, '8.9.10.11', headless(deviceValues(951)));
    await page.reload();
    await rows(page).nth(2).waitFor();
    const row = (name: string) => page.locator(`#events-body tr[data-request-id="${ids[name]!.requestId}"]`);
    expect(await row('crawler').textContent()).toContain('Googlebot · search crawler · verified');
    expect(await row('crawler').locator('.badge.good').textContent()).toBe('good bot');
    expect(await row('spoofer').textContent()).toContain('Googlebot · search crawler · spoofed');
    expect(await row('spoofer').locator('.badge.warn').textContent()).toBe('bad bot');
    expect(await row('automation').textContent()).toContain('browser automation · unknown');
    await panelShot(page, 'events-panel', '50-explorer-bots.png');
    await page.selectOption('#f-botIdentity', 'spoofed');
    await page.getByRole('button', { name: 'Filter', exact: true }).click();
    await page.waitForFunction(() => document.querySelectorAll('#events-body tr').length === 1);
    expect(await shownIds(page)).toEqual(req('spoofer'));
    expect(page.url()).toContain('botIdentity=spoofed');
    await page.goto(`${origin}/dashboard`);
    const table = page.locator('#bot-categories');
    await table.waitFor();
    expect(await table.locator('tr').nth(1).textContent()).toBe('search crawler11');
    expect(await table.locator('tr').nth(2).textContent()).toBe('browser automation01');
    await shot(page, '51-overview-bots.png');
    await context.close();
    expect(problems).toEqual([]);
  }, 120_000);

  it('a visitor page lists its related visitors with their evidence, each a link to its own page; More; an empty state; axe at 1280 and 390 px', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await context.clock.setFixedTime(h.clock.now());
    const page = watchProblems(await context.newPage(), problems);
    await page.goto(`${origin}/login?next=%2Fdashboard%2Fevents`);
    await page.getByRole('button', { name: 'Create one', exact: true }).click();
    await page.fill('#email', 'related-user@example.com');
    await page.fill('#password', 'correct horse battery');
    await page.click('#submit');
    await page.waitForURL(`${origin}/dashboard/events`, { timeout: 60_000 });
    const projectId = ((await (await context.request.get(`${origin}/api/projects`)).json()) as { projects: { id: string }[] }).projects[0]!.id;
    const created = await context.request.post(`${origin}/api/projects/${projectId}/keys`, { headers: { origin }, data: { name: 'live', type: 'live' } });
    const live = ((await created.json()) as { key: string }).key;
    // One machine's Chrome, Firefox and Edge on its home network (Chrome last, so with Edge most recently), and a machine of its own.
    const visit = async (v: V, ip: string) => {
      h.clock.advance(60_000);
      const res = await request(h.app).post('/v1/identify').set('X-API-Key', live).set('X-Forwarded-For', ip).send(identifyBody(v));
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body.visitorId as string;
    };
    const machine = deviceValues(960);
    const chrome = await visit(machine, '81.2.69.20');
    const firefox = await visit(inFirefox(machine), '81.2.69.21');
    const edge = await visit(inEdge(machine), '81.2.69.22');
    expect(await visit(machine, '81.2.69.20')).toBe(chrome);
    const alone = await visit(deviceValues(961), '2.125.160.20');

    // Chrome's page: Edge, then Firefox, each with its probability, evidence in words and when last seen together.
    await page.goto(`${origin}/dashboard/visitors/${chrome}?project=${projectId}`);
    await rows(page, 'related-body').nth(1).waitFor();
    expect(await page.textContent('#related-title')).toBe('Related visitors in Default project');
    const related = await rows(page, 'related-body').evaluateAll((trs) =>
      trs.map((tr) => Array.from((tr as HTMLTableRowElement).cells, (td) => td.textContent)),
    );
    expect(related.map((r) => r[0])).toEqual([edge, firefox]);
    for (const [, probability, evidence, together] of related) {
      expect(probability).toMatch(/^(8\d|9\d|100)%$/);
      expect(evidence).toMatch(/^(Hardware: GPU, screens|OS rendering: fonts, languages|Shared networks)/);
      expect(together).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    }
    expect(await page.textContent('#related-about')).toMatch(/same machine in another browser or browser profile \(80% likely or more\)/);
    expect(await page.isHidden('#related-empty')).toBe(true);
    expect(await page.isHidden('#related-more')).toBe(true);
    expect(await axe(page)).toEqual([]);
    await panelShot(page, 'visitor-panel', '60-visitor-related.png');

    // A relative's link opens its page in the same project, without reloading; its relatives name Chrome.
    await page.evaluate(() => ((window as unknown as { marker: number }).marker = 1));
    await page.getByRole('link', { name: firefox, exact: true }).click();
    await page.waitForURL(`${origin}/dashboard/visitors/${firefox}?project=${projectId}`);
    await expect.poll(() => page.textContent('#visitor-id')).toBe(firefox);
    await page.locator(`#related-body a[href*="${chrome}"]`).waitFor();
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('visitor-title');
    expect(await page.evaluate(() => (window as unknown as { marker?: number }).marker)).toBe(1);
    await page.goBack();
    await page.locator(`#related-body a[href*="${firefox}"]`).waitFor();
    expect(await page.textContent('#visitor-id')).toBe(chrome);

    // Pages of one (the page asks for the default 10; more than that are rare): More adds the next, then goes.
    const relatedCalls = (url: URL) => url.pathname.endsWith('/related');
    await page.route(relatedCalls, (route) => {
      const url = new URL(route.request().url());
      url.searchParams.set('limit', '1');
      return route.continue({ url: url.toString() });
    });
    await page.reload();
    await rows(page, 'related-body').first().waitFor();
    await page.getByRole('button', { name: 'More related visitors' }).waitFor();
    expect(await rows(page, 'related-body').count()).toBe(1);
    await page.getByRole('button', { name: 'More related visitors' }).click();
    await rows(page, 'related-body').nth(1).waitFor();
    expect(await rows(page, 'related-body').locator('a').allTextContents()).toEqual([edge, firefox]);
    await page.locator('#related-more').waitFor({ state: 'hidden' });
    await page.unroute(relatedCalls);

    // A visitor without relatives: what related visitors are, and that none passed the threshold.
    await page.goto(`${origin}/dashboard/visitors/${alone}`);
    await page.locator('#related-empty').waitFor({ state: 'visible' });
    expect(await page.textContent('#related-empty')).toBe(
      "No related visitors in this project. Related visitors are the same machine in another browser or browser profile, met on a network they share; none of this project's other visitors passed the threshold (80% likely).",
    );
    expect(await page.isHidden('#related-table')).toBe(true);
    expect(await axe(page)).toEqual([]);

    // With a second project the visitor page offers the project choice: the relatives are the chosen project's (Chrome was never seen there).
    const second = await context.request.post(`${origin}/api/projects`, { headers: { origin }, data: { name: 'Second' } });
    expect(second.status()).toBe(201);
    const secondId = ((await second.json()) as { id: string }).id;
    await page.goto(`${origin}/dashboard/visitors/${chrome}?project=${projectId}`);
    await rows(page, 'related-body').nth(1).waitFor();
    expect(await page.isVisible('#project-choice')).toBe(true);
    await page.selectOption('#project', secondId);
    await page.waitForURL(`${origin}/dashboard/visitors/${chrome}?project=${secondId}`);
    await page.locator('#related-empty').waitFor({ state: 'visible' });
    expect(await page.textContent('#related-title')).toBe('Related visitors in Second');
    expect(await rows(page, 'related-body').count()).toBe(0);
    expect(await page.textContent('#visitor-total')).toBe('2');
    const state = await context.storageState();
    await context.close();

    // 390 px: the relatives as blocks, no horizontal scrolling, axe again.
    const narrow = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, storageState: state });
    await narrow.clock.setFixedTime(h.clock.now());
    const phone = watchProblems(await narrow.newPage(), problems);
    await phone.goto(`${origin}/dashboard/visitors/${chrome}?project=${projectId}`);
    await rows(phone, 'related-body').nth(1).waitFor();
    await noSideScroll(phone);
    expect(await axe(phone)).toEqual([]);
    await panelShot(phone, 'visitor-panel', '61-visitor-related-390.png');
    await narrow.close();
    expect(problems).toEqual([]);
  }, 180_000);
});
