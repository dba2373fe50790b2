// The dashboard's Rules, Lists and Review pages in headless Chromium against
// the real service and database: an owner signed up on the login page
// creates lists (a refused batch names each bad value by its line) and rules
// (the editor shows a compile error at its place as the expression is typed,
// then how many recent events a good one matches; a template; reorder; Save
// as a new version, and a 409 when someone else saved first), labels a
// reviewed event fraud and puts its visitor on a list, each checked through
// the API; addresses survive reload and Back/Forward; a viewer sees
// everything without a control that changes anything, an analyst tries
// expressions and labels but saves no rule. Each page at 1280 and 390 px
// (screenshots in test-results/decisions/, axe-core, no horizontal
// scrolling); the pages come in their own script, loaded once.
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasChromium, launchChromium, servedHarness, watchProblems } from '../../support/browser.js';
import type { Harness } from '../../support/harness.js';
import { deviceValues, identifyBody, withNewToken } from '../../support/signals.js';

const SHOTS = new URL('../../../test-results/decisions/', import.meta.url);
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const PASSWORD = 'correct horse battery';

describe.skipIf(!hasChromium)('rules, lists and the review queue in the dashboard', () => {
  let origin: string;
  let h: Harness;
  let closeService: () => Promise<void>;
  let browser: Browser;
  let owner: BrowserContext;
  let ownerCookie: string;
  let accountId: string;
  let projectId: string;
  let live: string;
  let secret: string;
  const problems: string[] = [];
  let seed = 700;

  beforeAll(async () => {
    ({ h, origin, close: closeService } = await servedHarness(import.meta.filename, { TRUST_PROXY: '127.0.0.1/32,::1' }));
    mkdirSync(SHOTS, { recursive: true });
    browser = await launchChromium();

    // The owner signs up on the login page and lands on the Rules page asked for.
    owner = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = watchProblems(await owner.newPage(), problems);
    await page.goto(`${origin}/login?next=${encodeURIComponent('/dashboard/rules')}`);
    await page.getByRole('button', { name: 'Create one', exact: true }).click();
    await page.fill('#email', 'rules-owner@example.com');
    await page.fill('#password', PASSWORD);
    await page.click('#submit');
    await page.waitForURL(`${origin}/dashboard/rules`, { timeout: 60_000 });
    await page.locator('#rules-empty').waitFor({ state: 'visible' });
    await page.close();
    ownerCookie = (await owner.cookies()).map((c) => `${c.name}=${c.value}`).join('; ');

    accountId = (await asOwner('get', '/api/account')).body.account.id;
    projectId = (await asOwner('get', '/api/projects')).body.projects[0].id;
    const key = async (type: string) => ((await asOwner('post', `/api/projects/${projectId}/keys`).send({ name: type, type })).body as { key: string }).key;
    live = await key('live');
    secret = await key('secret');
    // Traffic for the previews: three devices.
    for (let i = 0; i < 3; i++) await identify();
  }, 120_000);

  afterAll(async () => {
    await owner?.close();
    await browser?.close();
    await closeService?.();
  });

  async function identify(ip = '81.2.69.142') {
    const res = await request(h.app)
      .post('/v1/identify')
      .set('X-API-Key', live)
      .set('X-Forwarded-For', ip)
      .send(identifyBody(withNewToken(deviceValues(++seed))));
    expect(res.status).toBe(200);
    return res.body as { requestId: string; visitorId: string };
  }
  /** The dashboard's API as the owner (their session cookie). */
  const asOwner = (method: 'get' | 'post', path: string) => request(h.app)[method](path).set('cookie', ownerCookie).set('origin', origin);
  /** The service's API with the project's secret key. */
  const v1 = (method: 'get' | 'put' | 'post', path: string) => request(h.app)[method](path).set('authorization', `Bearer ${secret}`);

  async function axe(page: Page): Promise<string[]> {
    await page.evaluate(AXE);
    const violations = (await page.evaluate(async () => {
      const result = await (window as unknown as { axe: { run: (o: unknown) => Promise<{ violations: unknown[] }> } }).axe.run({ resultTypes: ['violations'] });
      return result.violations;
    })) as { id: string; impact: string | null; nodes: { target: string[] }[] }[];
    return violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.impact} ${v.id} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`);
  }

  /** Screenshots at both widths, axe, and no horizontal scrolling at 390 px. */
  async function check(page: Page, name: string) {
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 900 });
      await page.screenshot({ path: new URL(`${name}-${width}.png`, SHOTS).pathname, fullPage: true });
      const [scroll, inner] = await page.evaluate(() => [document.scrollingElement!.scrollWidth, window.innerWidth]);
      expect(scroll, `${name} is ${scroll}px wide at ${inner}px`).toBeLessThanOrEqual(inner);
      expect(await axe(page), name).toEqual([]);
    }
    await page.setViewportSize({ width: 1280, height: 900 });
  }

  it('lists: create one, a refused batch names each bad value by its line, add with a note, search by prefix, remove, delete after a confirmation', async () => {
    const page = watchProblems(await owner.newPage(), problems);
    const scripts: string[] = [];
    page.on('request', (r) => r.resourceType() === 'script' && scripts.push(new URL(r.url()).pathname));
    await page.goto(`${origin}/dashboard/lists`);
    // The pages' script comes after the dashboard's own, once per page load (moving between them loads nothing).
    const loadedOnce = () => {
      expect(scripts.filter((s) => s === '/assets/decisions.js')).toHaveLength(1);
      expect(scripts.indexOf('/assets/dashboard.js')).toBeLessThan(scripts.indexOf('/assets/decisions.js'));
      scripts.length = 0;
    };
    await page.locator('#lists-empty').waitFor({ state: 'visible' });
    await page.fill('#list-name', 'blocked-ips');
    await page.selectOption('#list-kind', 'ip');
    await page.fill('#list-description', 'Addresses we refuse');
    await page.getByRole('button', { name: 'Create list', exact: true }).click();
    // The new list's own page.
    await page.waitForURL(`${origin}/dashboard/lists?project=${projectId}&list=blocked-ips`);
    await page.locator('#list-title', { hasText: 'List blocked-ips' }).waitFor();
    await page.locator('#entries-empty', { hasText: 'No values yet.' }).waitFor({ state: 'visible' });

    await page.fill('#entries-add', '10.0.0.0/8\nnot-an-ip\n\n300.1.1.1');
    await page.getByRole('button', { name: 'Add', exact: true }).click();
    await page.locator('#entries-add-problems li').nth(1).waitFor();
    expect(await page.textContent('#entries-add-error')).toBe('2 values do not fit a list of IP addresses and ranges: nothing was added.');
    expect(await page.locator('#entries-add-problems li').allTextContents()).toEqual([
      expect.stringMatching(/^Line 2: not-an-ip — \S/),
      expect.stringMatching(/^Line 4: 300\.1\.1\.1 — \S/),
    ]);
    expect((await v1('get', '/v1/lists/blocked-ips')).body.entries).toBe(0);

    await page.fill('#entries-add', '10.0.0.0/8\n81.2.69.0/24\n203.0.113.7');
    await page.fill('#entries-note', 'office');
    await page.getByRole('button', { name: 'Add', exact: true }).click();
    await page.locator('#entries-add-status', { hasText: 'Added 3, updated 0; the list holds 3.' }).waitFor();
    expect(await page.inputValue('#entries-add')).toBe('');
    expect(await page.locator('#entries-add-problems li').count()).toBe(0);
    expect(await page.locator('#entries-body tr').count()).toBe(3);
    const entries = await v1('get', '/v1/lists/blocked-ips/entries');
    expect(entries.body.entries.map((e: { value: string; note: string }) => [e.value, e.note])).toEqual([
      ['10.0.0.0/8', 'office'],
      ['203.0.113.7', 'office'],
      ['81.2.69.0/24', 'office'],
    ]);

    // A search by prefix goes into the address and survives a reload.
    await page.fill('#entries-prefix', '81.');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.waitForURL(/prefix=81\./);
    await expect.poll(() => page.locator('#entries-body tr').count()).toBe(1);
    loadedOnce();
    await page.reload();
    await page.locator('#entries-body tr').first().waitFor();
    expect(await page.locator('#entries-body tr').count()).toBe(1);
    expect(await page.inputValue('#entries-prefix')).toBe('81.');
    await check(page, 'list');

    // A value removed by its row's button.
    await page.getByRole('button', { name: 'Remove 81.2.69.0/24', exact: true }).click();
    await page.locator('#entries-remove-status', { hasText: 'Removed 1; the list holds 2.' }).waitFor();
    expect((await v1('get', '/v1/lists/blocked-ips')).body.entries).toBe(2);

    // A list of visitor ids for the review queue, and one to delete.
    for (const [name, kind] of [
      ['fraudsters', 'visitorId'],
      ['doomed', 'country'],
    ]) {
      await page.getByRole('link', { name: 'All lists', exact: true }).click();
      await page.locator('#lists-body tr').first().waitFor();
      await page.fill('#list-name', name!);
      await page.selectOption('#list-kind', kind!);
      await page.getByRole('button', { name: 'Create list', exact: true }).click();
      await page.waitForURL(new RegExp(`list=${name}$`));
      await page.locator('#list-title', { hasText: `List ${name}` }).waitFor();
    }
    // Back: all lists again.
    await page.goBack();
    await page.locator('#lists-body tr', { hasText: 'doomed' }).waitFor();
    expect(await page.locator('#lists-body tr').count()).toBe(3);
    await check(page, 'lists');
    const doomed = page.locator('#lists-body tr', { hasText: 'doomed' });
    await doomed.getByRole('button', { name: 'Delete doomed' }).click();
    await doomed.getByRole('button', { name: 'Cancel' }).click();
    await doomed.getByRole('button', { name: 'Delete doomed' }).click();
    await doomed.getByRole('button', { name: 'Confirm delete' }).click();
    await page.locator('#lists-status', { hasText: 'Deleted doomed and its 0 entries.' }).waitFor();
    expect(await page.locator('#lists-body tr').count()).toBe(2);
    expect((await v1('get', '/v1/lists/doomed')).status).toBe(404);

    loadedOnce();
    await page.close();
    expect(problems).toEqual([]);
  }, 120_000);

  it('rules: the editor shows a compile error at its place as one types, then the preview; a good rule and a template are saved as versions; a stale save is a 409', async () => {
    const page = watchProblems(await owner.newPage(), problems);
    await page.goto(`${origin}/dashboard/rules`);
    await page.locator('#rules-empty').waitFor({ state: 'visible' });
    await page.getByRole('button', { name: 'New rule', exact: true }).click();
    await page.waitForURL(`${origin}/dashboard/rules?project=${projectId}&rule=new`);
    await page.locator('#rule-editor').waitFor({ state: 'visible' });
    expect(await page.textContent('#rule-editor-title')).toBe('New rule');

    // A field chosen in the reference goes in at the cursor.
    await page.fill('#reference-filter', 'suspect score');
    expect(await page.locator('#reference-list li:visible').count()).toBe(1);
    await page.getByRole('button', { name: 'Insert suspectScore', exact: true }).click();
    await expect.poll(() => page.inputValue('#rule-expression')).toBe('suspectScore');

    // Typed on: line 2 names a field that does not exist.
    await page.locator('#rule-expression').press('End');
    await page.locator('#rule-expression').pressSequentially(' >= 0 &&\n  nosuchfield == 1');
    // (A check of a shorter text may show first while typing: the last one wins.)
    const error = page.locator('#rule-check-error');
    await expect.poll(() => error.textContent()).toMatch(/^Line 2, column 3: \S/);
    expect(await page.textContent('#rule-marker')).toBe('2 |   nosuchfield == 1\n  |   ^');
    expect(await page.getAttribute('#rule-expression', 'aria-invalid')).toBe('true');
    await check(page, 'rule-error');
    // The position puts the cursor there.
    await error.getByRole('button', { name: 'Line 2, column 3' }).click();
    const expression = 'suspectScore >= 0 &&\n  nosuchfield == 1';
    expect(await page.evaluate(() => (document.getElementById('rule-expression') as HTMLTextAreaElement).selectionStart)).toBe(
      expression.indexOf('nosuchfield'),
    );

    // A good expression: how many of the recent events it matches, some linked to the Events page.
    await page.fill('#rule-expression', "suspectScore >= 0 && !inList('blocked-ips', ip)");
    await page.locator('#rule-preview').waitFor();
    expect(await page.textContent('#rule-preview')).toBe('Compiles. Matches 3 of the last 3 events in 7 days.');
    expect(await page.isHidden('#rule-marker')).toBe(true);
    expect(await page.getAttribute('#rule-expression', 'aria-invalid')).toBeNull();
    const sample = page.locator('#rule-sample a');
    expect(await sample.count()).toBe(3);
    expect(await sample.first().getAttribute('href')).toMatch(/^\/dashboard\/events\?project=prj_\w+&visitorId=iq_\w+&event=req_\w+$/);
    await check(page, 'rule-preview');

    await page.fill('#rule-name', 'Review everyone');
    await page.selectOption('#rule-action', 'review');
    await page.getByRole('button', { name: 'Done', exact: true }).click();
    await page.waitForURL(`${origin}/dashboard/rules?project=${projectId}`);
    await page.locator('#rules-body tr').first().waitFor();
    expect(await page.textContent('#ruleset-dirty')).toMatch(/^Unsaved changes/);
    await page.getByRole('button', { name: 'Save as version 1', exact: true }).click();
    await page.locator('#ruleset-status', { hasText: 'Saved version 1' }).waitFor();
    expect(await page.textContent('#ruleset-version')).toMatch(/^Version 1, saved 2026-01-15 12:00 UTC by \S+\.$/);
    const saved = await v1('get', '/v1/ruleset');
    expect(saved.body).toMatchObject({
      version: 1,
      defaultAction: 'allow',
      rules: [
        {
          id: 'review-everyone',
          name: 'Review everyone',
          expression: "suspectScore >= 0 && !inList('blocked-ips', ip)",
          action: 'review',
          enabled: true,
          mode: 'live',
        },
      ],
    });

    // A template, with a block response, moved to the top and put in test mode.
    await page.getByRole('link', { name: 'Use this template: Block bad bots' }).click();
    await page.waitForURL(/rule=new&template=block-bad-bots$/);
    await page.locator('#rule-preview').waitFor();
    expect(await page.inputValue('#rule-name')).toBe('Block bad bots');
    expect(await page.inputValue('#rule-expression')).toBe("verdicts.bot.result && verdicts.bot.kind == 'bad'");
    expect(await page.isVisible('#rule-block')).toBe(true);
    await page.fill('#rule-status', '429');
    await page.fill('#rule-headers', 'Content-Type: application/json\nbroken line');
    await page.getByRole('button', { name: 'Done', exact: true }).click();
    expect(await page.textContent('#rule-error')).toBe('Headers, line 2: write it as name: value');
    await page.fill('#rule-headers', 'Content-Type: application/json');
    await page.fill('#rule-body', '{"error":"no bots"}');
    await page.getByRole('button', { name: 'Done', exact: true }).click();
    await page.locator('#rules-body tr').nth(1).waitFor();
    await page.getByRole('button', { name: 'Move Block bad bots up' }).click();
    // Focus stays with the rule: at the top its Up is disabled, so its Down.
    expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe('Move Block bad bots down');
    await page.getByRole('combobox', { name: 'Mode of Block bad bots' }).selectOption('test');
    await page.getByRole('button', { name: 'Save as version 2', exact: true }).click();
    await page.locator('#ruleset-status', { hasText: 'Saved version 2' }).waitFor();
    expect((await v1('get', '/v1/ruleset')).body).toMatchObject({
      version: 2,
      rules: [
        {
          id: 'block-bad-bots',
          action: 'block',
          mode: 'test',
          response: { status: 429, headers: { 'content-type': 'application/json' }, body: '{"error":"no bots"}' },
        },
        { id: 'review-everyone', action: 'review', mode: 'live' },
      ],
    });

    // Its hits: the next identification is reviewed by the second rule.
    await identify();
    await page.reload();
    await page.locator('#rules-body tr').nth(1).waitFor();
    expect(await page.locator('#rules-body tr').nth(1).locator('td').nth(5).textContent()).toBe('1');
    await check(page, 'rules');

    // An address per rule: reload, Back and Forward keep the editor on it.
    await page.getByRole('link', { name: 'Review everyone', exact: true }).click();
    await page.waitForURL(/rule=review-everyone$/);
    await page.locator('#rule-preview').waitFor();
    await page.reload();
    await page.locator('#rule-editor').waitFor({ state: 'visible' });
    expect(await page.inputValue('#rule-name')).toBe('Review everyone');
    await page.goBack();
    await page.locator('#ruleset-panel').waitFor({ state: 'visible' });
    expect(await page.isHidden('#rule-editor')).toBe(true);
    await page.goForward();
    await page.locator('#rule-editor').waitFor({ state: 'visible' });
    await page.getByRole('link', { name: 'All rules' }).click();
    await page.locator('#ruleset-panel').waitFor({ state: 'visible' });

    // Someone else saves first: the page's save is refused and offers their version.
    expect((await v1('put', '/v1/ruleset').send({ rules: saved.body.rules, defaultAction: 'allow' })).status).toBe(200);
    await page.selectOption('#ruleset-default', 'challenge');
    await page.getByRole('button', { name: 'Save as version 3', exact: true }).click();
    await page.locator('#ruleset-conflict').waitFor({ state: 'visible' });
    expect(await page.textContent('#ruleset-conflict-text')).toMatch(/^Someone else saved a newer version of these rules since you loaded version 2\./);
    await page.getByRole('button', { name: 'Load the latest version' }).click();
    await page.locator('#ruleset-version', { hasText: 'Version 3' }).waitFor();
    expect(await page.locator('#rules-body tr').count()).toBe(1);
    expect(await page.inputValue('#ruleset-default')).toBe('allow');
    expect((await v1('get', '/v1/ruleset')).body).toMatchObject({ version: 3, defaultAction: 'allow' });
    await page.close();
    expect(problems).toEqual([]);
  }, 180_000);

  it('review: a reviewed event waits in the queue; labeled fraud, its visitor goes onto a list; the labeled tab and the export show it', async () => {
    const event = await identify();
    const page = watchProblems(await owner.newPage(), problems);
    await page.goto(`${origin}/dashboard/review`);
    const row = page.locator(`#reviews-body tr[data-request-id="${event.requestId}"]`);
    await row.waitFor();
    expect(await row.locator('td').nth(5).textContent()).toBe('Review everyonereview-everyone');
    expect(await row.getByRole('link', { name: `Visitor ${event.visitorId}` }).getAttribute('href')).toBe(
      `/dashboard/visitors/${event.visitorId}?project=${projectId}`,
    );
    await row.getByRole('button', { name: `Label ${event.requestId}`, exact: true }).click();
    await page.fill(`#label-note-${event.requestId}`, 'card testing');
    // Lists of the matching kind only: visitor ids (fraudsters) and IPs (blocked-ips); the event has no linkedId.
    const form = page.locator('.label-form');
    expect(await form.locator('select').evaluateAll((s) => s.map((x) => (x as HTMLSelectElement).dataset.field))).toEqual(['visitorId', 'ip']);
    await form.getByRole('combobox', { name: 'Add its visitor id to' }).selectOption('fraudsters');
    await check(page, 'review-label');
    await page.getByRole('button', { name: `Label ${event.requestId} fraud` }).click();
    await page.locator('#reviews-status', { hasText: `Labeled ${event.requestId} fraud; added to fraudsters.` }).waitFor();
    expect(await row.locator('td').last().textContent()).toMatch(/^fraudcard testingby \S+, 2026-01-15 12:00:00 UTCChange label$/);

    const labeled = (await v1('get', '/v1/reviews?status=labeled')).body.items;
    expect(labeled).toEqual([
      expect.objectContaining({ requestId: event.requestId, label: expect.objectContaining({ verdict: 'fraud', note: 'card testing' }) }),
    ]);
    expect((await v1('get', '/v1/lists/fraudsters/entries')).body.entries.map((e: { value: string }) => e.value)).toEqual([event.visitorId]);

    // The labeled tab, by its address; the export is this project's labels as JSON lines.
    await page.getByRole('link', { name: 'Labeled', exact: true }).click();
    await page.waitForURL(/status=labeled$/);
    await page.locator('#reviews-body tr').first().waitFor();
    expect(await page.locator('#reviews-body tr').count()).toBe(1);
    await check(page, 'review');
    const href = await page.getAttribute('#labels-export', 'href');
    expect(href).toBe(`/api/projects/${projectId}/labels`);
    const exported = await asOwner('get', href!);
    expect(exported.status).toBe(200);
    expect(exported.headers['content-type']).toMatch(/application\/x-ndjson/);
    expect(JSON.parse(exported.text.trim())).toMatchObject({ requestId: event.requestId, label: { verdict: 'fraud' } });
    await page.close();
    expect(problems).toEqual([]);
  }, 120_000);

  /** A member of the owner's account with `role`, signed up through an invitation. */
  async function member(role: 'viewer' | 'analyst'): Promise<Page> {
    const invite = await asOwner('post', `/api/accounts/${accountId}/invitations`).send({ email: `${role}@example.com`, role });
    expect(invite.status).toBe(201);
    const invitation = new URL(invite.body.url as string).searchParams.get('invite');
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const res = await context.request.post(`${origin}/api/auth/signup`, {
      headers: { origin },
      data: { email: `${role}@example.com`, password: PASSWORD, invitation },
    });
    expect(res.status()).toBe(201);
    return watchProblems(await context.newPage(), problems);
  }

  it('a viewer reads rules, lists and the queue without a control that changes anything', async () => {
    const page = await member('viewer');
    await page.goto(`${origin}/dashboard/rules?project=${projectId}`);
    await page.locator('#rules-body tr').first().waitFor();
    expect(await page.locator('.dash-nav a:visible').allTextContents()).toEqual(['Overview', 'Events', 'Rules', 'Lists', 'Review']);
    expect(await page.textContent('#ruleset-role')).toBe('You can read the rules; analysts try expressions and admins change them.');
    for (const hidden of ['#ruleset-save', '#ruleset-discard', '#rule-add']) expect(await page.isHidden(hidden), hidden).toBe(true);
    expect(await page.isDisabled('#ruleset-default')).toBe(true);
    expect(await page.locator('#rules-body button, #rules-body select, #rules-body input').count()).toBe(0);
    expect(await page.locator('#rule-templates a').count()).toBe(0);
    await page.getByRole('link', { name: 'Review everyone', exact: true }).click();
    await page.locator('#rule-editor').waitFor({ state: 'visible' });
    expect(await page.inputValue('#rule-expression')).toBe("suspectScore >= 0 && !inList('blocked-ips', ip)");
    expect(await page.getAttribute('#rule-expression', 'readonly')).not.toBeNull();
    expect(await page.isHidden('#rule-actions')).toBe(true);
    expect(await page.locator('#reference-list button').count()).toBe(0);
    expect(await page.locator('#rule-check').textContent()).toBe('');

    await page.goto(`${origin}/dashboard/lists?project=${projectId}`);
    await page.locator('#lists-body tr').first().waitFor();
    expect(await page.isHidden('#list-form')).toBe(true);
    expect(await page.locator('#lists-body button').count()).toBe(0);
    await page.getByRole('link', { name: 'blocked-ips', exact: true }).click();
    await page.locator('#entries-body tr').first().waitFor();
    for (const hidden of ['#entries-add-form', '#entries-remove-form', '#list-describe']) expect(await page.isHidden(hidden), hidden).toBe(true);
    expect(await page.locator('#entries-body button').count()).toBe(0);

    await page.goto(`${origin}/dashboard/review?project=${projectId}&status=all`);
    await page.locator('#reviews-body tr').first().waitFor();
    expect(await page.locator('#reviews-body button').count()).toBe(0);
    expect(await page.isHidden('#labels-export')).toBe(true);
    await check(page, 'review-viewer');
    await page.context().close();
    expect(problems).toEqual([]);
  }, 120_000);

  it('an analyst tries an expression and may label, but saves no rule', async () => {
    const page = await member('analyst');
    await page.goto(`${origin}/dashboard/rules?project=${projectId}&rule=review-everyone`);
    await page.locator('#rule-preview').waitFor();
    expect(await page.isHidden('#rule-actions')).toBe(true);
    expect(await page.isHidden('#ruleset-save')).toBe(true);
    await page.fill('#rule-expression', 'visitCount == 1 &&');
    await page.locator('#rule-check-error').waitFor();
    await page.goto(`${origin}/dashboard/review?project=${projectId}&status=all`);
    await page.locator('#reviews-body tr').first().waitFor();
    expect(await page.locator('#reviews-body button', { hasText: 'Label' }).count()).toBe(await page.locator('#reviews-body tr').count());
    expect(await page.isVisible('#labels-export')).toBe(true);
    await page.context().close();
    expect(problems).toEqual([]);
  }, 60_000);
});
