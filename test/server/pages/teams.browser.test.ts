// Teams in the dashboard, in headless Chromium against the real service and
// database: an owner invites from the Members page and the link is accepted
// end to end (a sign-up; a signed-in user's one-button join), a viewer's
// navigation and a page their role cannot use, switching accounts, the
// last owner's 409 beside the control, and the audit log's filters in the
// address with Load more. Screenshots in test-results/teams/, axe-core
// with no serious or critical violation on each page shown.
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasChromium, launchChromium, servedHarness, watchProblems } from '../../support/browser.js';

const SHOTS = new URL('../../../test-results/teams/', import.meta.url);
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const PASSWORD = 'quiet-otter-lantern-47';

describe.skipIf(!hasChromium)('teams in the dashboard', () => {
  let origin: string;
  let closeService: () => Promise<void>;
  let browser: Browser;
  const problems: string[] = [];

  beforeAll(async () => {
    ({ origin, close: closeService } = await servedHarness(import.meta.filename));
    mkdirSync(SHOTS, { recursive: true });
    browser = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await closeService?.();
  });

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

  /** A browser signed up as `email` (a new account of their own, its owner). */
  async function signedUp(email: string, width = 1280): Promise<Page> {
    const context = await browser.newContext({ viewport: { width, height: 900 } });
    const res = await context.request.post(`${origin}/api/auth/signup`, { headers: { origin }, data: { email, password: PASSWORD } });
    expect(res.status()).toBe(201);
    return watchProblems(await context.newPage(), problems);
  }

  const invite = async (page: Page, email: string, role: string) => {
    await page.goto(`${origin}/dashboard/members`);
    await page.locator('#members-body tr').first().waitFor();
    await page.fill('#member-invite-email', email);
    await page.selectOption('#member-invite-role', role);
    await page.click('#member-invite-form button[type=submit]');
    const link = await page.locator('#member-invite-link-value').inputValue();
    expect(link).toMatch(new RegExp(`^${origin}/login\\?invite=dij_`));
    await page.locator('#member-invitations-body tr', { hasText: email }).waitFor();
    return link;
  };

  it('an owner invites a viewer, who signs up through the link and sees only the pages a viewer reads', async () => {
    const owner = await signedUp('owner@example.com');
    const link = await invite(owner, 'viewer@example.com', 'viewer');
    // The link is shown once: after a reload only the pending invitation remains.
    await owner.reload();
    await owner.locator('#member-invitations-body tr', { hasText: 'viewer@example.com' }).waitFor();
    expect(await owner.locator('#member-invite-link-value').count()).toBe(0);
    for (const width of [1280, 390]) {
      await owner.setViewportSize({ width, height: 900 });
      await owner.screenshot({ path: new URL(`members-${width}.png`, SHOTS).pathname, fullPage: true });
      expect(await axe(owner)).toEqual([]);
    }

    const context = await browser.newContext();
    const viewer = watchProblems(await context.newPage(), problems);
    await viewer.goto(link);
    expect(await viewer.textContent('#title')).toBe('Create an account');
    await viewer.fill('#email', 'viewer@example.com');
    await viewer.fill('#password', PASSWORD);
    await viewer.click('#submit');
    await viewer.waitForURL(`${origin}/dashboard`);
    await viewer.locator('#account-role', { hasText: 'Your role: viewer' }).waitFor();
    const shown = await viewer.locator('.dash-nav a:visible').evaluateAll((links) => links.map((a) => a.textContent));
    expect(shown).toEqual(['Overview', 'Events', 'Rules', 'Lists', 'Review']);
    // A page the role cannot use, loaded by its address, says so.
    for (const path of ['/dashboard/keys', '/dashboard/members', '/dashboard/audit']) {
      await viewer.goto(`${origin}${path}`);
      await viewer.locator('#view-denied', { hasText: 'yours in this account is viewer' }).waitFor();
      expect(await viewer.locator('.view:not([hidden])').count()).toBe(0);
    }
    await viewer.screenshot({ path: new URL('denied-viewer-1280.png', SHOTS).pathname, fullPage: true });
    expect(await axe(viewer)).toEqual([]);
    // The owner sees the new member.
    await owner.goto(`${origin}/dashboard/members`);
    await owner.locator('#members-body tr', { hasText: 'viewer@example.com' }).waitFor();
    expect(problems).toEqual([]);
    await context.close();
    await owner.context().close();
  });

  it('a signed-in user joins with one button, then switches between the two accounts', async () => {
    const owner = await signedUp('boss@example.com');
    const link = await invite(owner, 'helper@example.com', 'admin');
    const helper = await signedUp('helper@example.com');
    await helper.goto(link);
    await helper.locator('#join-email', { hasText: 'helper@example.com' }).waitFor();
    expect(await axe(helper)).toEqual([]);
    await helper.click('#join-submit');
    await helper.waitForURL(`${origin}/dashboard`);
    await helper.locator('#account-role', { hasText: 'Your role: admin' }).waitFor();
    expect(await helper.locator('#account option').count()).toBe(2);
    await helper.screenshot({ path: new URL('switcher-1280.png', SHOTS).pathname });

    // To the helper's own account: owner there; the same page again.
    await helper.goto(`${origin}/dashboard/members`);
    await helper.locator('#members-body tr').first().waitFor();
    const own = await helper.locator('#account option:not(:checked)').getAttribute('value');
    await helper.selectOption('#account', own);
    await helper.locator('#account-role', { hasText: 'Your role: owner' }).waitFor();
    expect(new URL(helper.url()).pathname).toBe('/dashboard/members');
    await helper.locator('#members-body tr').first().waitFor();
    expect(await helper.locator('#members-body tr').count()).toBe(1);
    expect(await helper.locator('#account').inputValue()).toBe(own);

    // The account's last owner cannot demote themselves: the server's refusal beside the row.
    const ownRow = helper.locator('#members-body tr').first();
    await ownRow.locator('select').selectOption('viewer');
    await ownRow.locator('[role=alert]', { hasText: /owner/ }).waitFor();
    expect(await ownRow.locator('select').inputValue()).toBe('owner');
    // Removing asks first.
    await ownRow.getByRole('button', { name: 'Remove helper@example.com' }).click();
    await ownRow.getByRole('button', { name: 'Cancel' }).click();
    expect(await helper.locator('#members-body tr').count()).toBe(1);
    expect(problems).toEqual([]);
    await helper.context().close();
    await owner.context().close();
  });

  it('an existing user signs in through the link and joins as an analyst, without the pages of keys, secrets and members', async () => {
    const owner = await signedUp('lead@example.com');
    const link = await invite(owner, 'analyst@example.com', 'analyst');
    await (await signedUp('analyst@example.com')).context().close();
    const context = await browser.newContext();
    const analyst = watchProblems(await context.newPage(), problems);
    await analyst.goto(link);
    await analyst.getByRole('button', { name: 'Sign in', exact: true }).click();
    await analyst.fill('#email', 'analyst@example.com');
    await analyst.fill('#password', PASSWORD);
    await analyst.click('#submit');
    await analyst.waitForURL(`${origin}/dashboard`);
    await analyst.locator('#account-role', { hasText: 'Your role: analyst' }).waitFor();
    const shown = await analyst.locator('.dash-nav a:visible').evaluateAll((links) => links.map((a) => a.textContent));
    expect(shown).toEqual(['Overview', 'Events', 'Visitor', 'Rules', 'Lists', 'Review', 'Install', 'Settings']);
    await analyst.goto(`${origin}/dashboard/settings`);
    await analyst.locator('#projects-body tr').first().waitFor();
    expect(await analyst.locator('#project-form').isHidden()).toBe(true);
    expect(await analyst.locator('#projects-body button').count()).toBe(0);
    expect(problems).toEqual([]);
    await context.close();
    await owner.context().close();
  });

  it('the audit log: newest first, filters in the address through reload and Back, Load more', async () => {
    const owner = await signedUp('auditor@example.com');
    const request = owner.context().request;
    const projectId = ((await (await request.get(`${origin}/api/projects`)).json()) as { projects: { id: string }[] }).projects[0]!.id;
    for (let i = 0; i < 55; i++) {
      const res = await request.patch(`${origin}/api/projects/${projectId}`, { headers: { origin }, data: { name: `Site ${i}` } });
      expect(res.status()).toBe(200);
    }
    await owner.goto(`${origin}/dashboard/audit`);
    await owner.locator('#audit-body tr').nth(49).waitFor();
    expect(await owner.locator('#audit-body tr').count()).toBe(50);
    for (const width of [1280, 390]) {
      await owner.setViewportSize({ width, height: 900 });
      await owner.screenshot({ path: new URL(`audit-${width}.png`, SHOTS).pathname, fullPage: true });
      expect(await axe(owner)).toEqual([]);
    }
    await owner.setViewportSize({ width: 1280, height: 900 });

    await owner.selectOption('#audit-action', 'project.update');
    await owner.click('#audit-filter button[type=submit]');
    await owner.waitForURL(/action=project\.update/);
    await owner.locator('#audit-more').waitFor();
    const times = await owner.locator('#audit-body tr td:first-child').allTextContents();
    expect([...times].sort().reverse()).toEqual(times);
    await owner.click('#audit-more');
    await owner.locator('#audit-body tr').nth(54).waitFor();
    expect(await owner.locator('#audit-body tr').count()).toBe(55);
    expect(await owner.locator('#audit-more').isHidden()).toBe(true);
    expect(new Set(await owner.locator('#audit-body tr td:nth-child(3)').allTextContents())).toEqual(new Set(['Project edited']));

    // A deep link and a reload keep the filter; Back returns to the unfiltered log.
    await owner.reload();
    await owner.locator('#audit-body tr').first().waitFor();
    expect(await owner.locator('#audit-action').inputValue()).toBe('project.update');
    await owner.goBack();
    await owner.waitForURL(`${origin}/dashboard/audit`);
    await owner.locator('#audit-body tr').nth(49).waitFor();
    expect(await owner.locator('#audit-action').inputValue()).toBe('');
    const future = Date.parse('2100-01-01T00:00:00Z');
    await owner.goto(`${origin}/dashboard/audit?start=${future}`);
    await owner.locator('#audit-empty').waitFor({ state: 'visible' });
    expect(await owner.locator('#audit-start').inputValue()).toBe('2100-01-01T00:00');
    expect(problems).toEqual([]);
    await owner.context().close();
  });
});
