// The device code flow end to end in real headless Chromium: a tool starts a
// grant and polls while a person follows the verification URL, signs up on
// the login page, checks the code and approves (or denies) on the consent
// page. Screenshots go to test-results/deviceflow/ (git-ignored).
import { mkdirSync } from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasChromium, launchChromium, servedHarness, watchProblems } from '../../support/browser.js';
import type { Harness } from '../../support/harness.js';
import { deviceValues, identifyBody } from '../../support/signals.js';

const SHOTS = new URL('../../../test-results/deviceflow/', import.meta.url);
const LIVE_KEY_RE = /^svc_live_[0-9A-Za-z]{38}$/;

interface Grant {
  device_code: string;
  user_code: string;
  verification_url: string;
  interval: number;
}

describe.skipIf(!hasChromium)('device code flow in headless Chromium', () => {
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
    context = await browser.newContext({ viewport: { width: 900, height: 1000 } });
  });

  afterAll(async () => {
    await browser?.close();
    await closeService?.();
  });

  const watch = (page: Page) => watchProblems(page, problems);

  async function startGrant(clientName: string): Promise<Grant> {
    const res = await fetch(`${origin}/api/cli/device-code`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'acme-cli/2.0 (linux; x64)' },
      body: JSON.stringify({ client_name: clientName }),
    });
    expect(res.status).toBe(200);
    return (await res.json()) as Grant;
  }

  /** A well-behaved tool: waits `interval` (on the injected clock) between polls until the grant ends. */
  async function poller(grant: Grant, signal: { stop: boolean }) {
    let interval = grant.interval;
    const seen: string[] = [];
    while (!signal.stop) {
      h.clock.advance(interval * 1000);
      const res = await fetch(`${origin}/api/cli/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ device_code: grant.device_code }),
      });
      const body = (await res.json()) as { status: string; interval?: number; api_key?: string };
      seen.push(body.status);
      if (res.status === 200 && body.status === 'pending') {
        interval = body.interval!;
        await new Promise((r) => setTimeout(r, 100));
        continue;
      }
      return { http: res.status, body, seen };
    }
    return { http: 0, body: { status: 'stopped' }, seen };
  }

  it('signs up through the login page and approves a grant while the tool polls; the tool receives a working key', async () => {
    const grant = await startGrant('acme-cli on build-box');
    expect(grant.verification_url).toBe(`${origin}/cli/auth?code=${grant.user_code}`);
    const signal = { stop: false };
    const polling = poller(grant, signal);

    const page = watch(await context.newPage());
    const nav = await page.goto(grant.verification_url);
    // Not signed in: sent to the login page, with this page as `next`.
    expect(new URL(page.url()).pathname).toBe('/login');
    expect(new URL(page.url()).searchParams.get('next')).toBe(`/cli/auth?code=${grant.user_code}`);
    expect(nav?.headers()['content-security-policy']).toContain("script-src 'self'");
    await page.getByRole('button', { name: 'Create one' }).click();
    await page.fill('#email', 'browser-user@example.com');
    await page.fill('#password', 'correct horse battery');
    await page.screenshot({ path: new URL('01-sign-up.png', SHOTS).pathname });
    await page.click('#submit');

    // Back on the consent page.
    await page.waitForURL(`${origin}/cli/auth?code=${grant.user_code}`);
    await page.locator('#consent').waitFor({ state: 'visible' });
    expect(await page.textContent('#client-name')).toBe('acme-cli on build-box');
    expect(await page.textContent('#user-code')).toBe(grant.user_code);
    expect(await page.textContent('#request-ip')).toBe('127.0.0.1');
    expect(await page.textContent('#request-ua')).toBe('acme-cli/2.0 (linux; x64)');
    expect(await page.textContent('#key-name')).toBe('acme-cli on build-box (CLI)');
    expect(await page.textContent('#who')).toContain('browser-user@example.com');
    expect(await page.locator('#project option').allTextContents()).toEqual(['Default project']);
    // One account where keys may be created: no choice of account.
    expect(await page.isHidden('#account-choice')).toBe(true);
    // Approve needs the code confirmed; Deny is always there, the same size.
    expect(await page.isDisabled('#approve')).toBe(true);
    expect(await page.isEnabled('#deny')).toBe(true);
    const [approveBox, denyBox] = await Promise.all([page.locator('#approve').boundingBox(), page.locator('#deny').boundingBox()]);
    expect(approveBox!.width).toBeCloseTo(denyBox!.width, 0);
    expect(approveBox!.height).toBeCloseTo(denyBox!.height, 0);
    await page.screenshot({ path: new URL('02-consent.png', SHOTS).pathname, fullPage: true });

    // The tool is still waiting.
    expect(signal.stop).toBe(false);
    await page.check('#confirm');
    expect(await page.isEnabled('#approve')).toBe(true);
    await page.click('#approve');
    await page.locator('#done').waitFor({ state: 'visible' });
    expect(await page.textContent('#done-title')).toBe('Approved');
    await page.screenshot({ path: new URL('03-approved.png', SHOTS).pathname });

    const result = await Promise.race([polling, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('poller did not finish')), 15_000))]);
    signal.stop = true;
    expect(result.http).toBe(200);
    expect(result.body).toEqual({ status: 'authorized', api_key: expect.stringMatching(LIVE_KEY_RE) });
    expect(result.seen[0]).toBe('pending');

    // The key works, and the dashboard API lists it under the tool's name.
    const identify = await fetch(`${origin}/v1/identify`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': result.body.api_key! },
      body: JSON.stringify(identifyBody(deviceValues(77))),
    });
    expect(identify.status).toBe(200);
    const keys = await page.evaluate(async () => {
      const projects = await (await fetch('/api/projects')).json();
      return (await fetch(`/api/projects/${projects.projects[0].id}/keys`)).json();
    });
    expect(keys.keys).toEqual([expect.objectContaining({ name: 'acme-cli on build-box (CLI)', type: 'live', source: 'cli', status: 'active' })]);

    // Reloading the page now shows the outcome, not the form.
    await page.reload();
    await page.locator('#done').waitFor({ state: 'visible' });
    expect(await page.textContent('#done-text')).toContain('has received its key');
    await page.close();
    expect(problems).toEqual([]);
  });

  it('shows a hostile client name as text and denies; the tool is told "denied"', async () => {
    const hostile = '<img src=x onerror="window.__pwned=1">Evil & Co';
    const grant = await startGrant(hostile);
    const signal = { stop: false };
    const polling = poller(grant, signal);

    const page = watch(await context.newPage());
    await page.goto(grant.verification_url);
    await page.locator('#consent').waitFor({ state: 'visible' });
    expect(await page.textContent('#client-name')).toBe(hostile);
    expect(await page.locator('#client-name img').count()).toBe(0);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    await page.screenshot({ path: new URL('04-hostile-name.png', SHOTS).pathname, fullPage: true });

    await page.click('#deny');
    await page.locator('#done').waitFor({ state: 'visible' });
    expect(await page.textContent('#done-title')).toBe('Request denied');
    await page.screenshot({ path: new URL('05-denied.png', SHOTS).pathname });

    const result = await polling;
    signal.stop = true;
    expect(result.http).toBe(410);
    expect(result.body).toEqual({ status: 'denied' });
    await page.close();
    expect(problems).toEqual([]);
  });

  /** A user signed up through the API in a context of their own (its cookies are theirs). */
  async function apiUser(email: string) {
    const ctx = await browser.newContext({ viewport: { width: 900, height: 1000 } });
    const res = await ctx.request.post(`${origin}/api/auth/signup`, { headers: { origin }, data: { email, password: 'correct horse battery' } });
    expect(res.status()).toBe(201);
    const accountId = ((await res.json()) as { account: { id: string } }).account.id;
    const call = async (method: 'get' | 'post' | 'put', path: string, data?: object) => {
      const answer = await ctx.request[method](`${origin}${path}`, { headers: { origin }, ...(data ? { data } : {}) });
      expect(answer.ok(), `${method} ${path}: ${answer.status()}`).toBe(true);
      return answer.json() as Promise<Record<string, any>>;
    };
    return { ctx, email, accountId, call };
  }
  type ApiUser = Awaited<ReturnType<typeof apiUser>>;
  /** `member` joins `owner`'s account with `role`, then works in their own account again. */
  async function join(owner: ApiUser, member: ApiUser, role: string) {
    const invited = await owner.call('post', `/api/accounts/${owner.accountId}/invitations`, { email: member.email, role });
    await member.call('post', '/api/invitations/accept', { invitation: new URL(invited.url).searchParams.get('invite') });
    await member.call('put', '/api/session/account', { accountId: member.accountId });
  }

  it('offers only the accounts where the user may create keys, each with its projects, and creates the key in the chosen one', async () => {
    const [user, team, club] = await Promise.all([apiUser('many@example.com'), apiUser('team@example.com'), apiUser('club@example.com')]);
    await join(team, user, 'admin');
    await join(club, user, 'analyst');
    const staging = await team.call('post', '/api/projects', { name: 'Staging' });
    const grant = await startGrant('team-deploy');

    const page = watch(await user.ctx.newPage());
    await page.goto(grant.verification_url);
    await page.locator('#consent').waitFor({ state: 'visible' });
    expect(await page.isVisible('#account-choice')).toBe(true);
    // Their own account first (the current one, chosen), then the team's; not the club's, where they are an analyst.
    expect(await page.locator('#account option').allTextContents()).toEqual([`${user.accountId} (owner)`, `${team.accountId} (admin)`]);
    expect(await page.inputValue('#account')).toBe(user.accountId);
    expect(await page.locator('#project option').allTextContents()).toEqual(['Default project']);
    await page.selectOption('#account', team.accountId);
    expect(await page.locator('#project option').allTextContents()).toEqual(['Default project', 'Staging']);
    await page.selectOption('#project', staging.id as string);
    await page.screenshot({ path: new URL('07-choose-account.png', SHOTS).pathname, fullPage: true });
    await page.check('#confirm');
    await page.click('#approve');
    await page.locator('#done').waitFor({ state: 'visible' });

    h.clock.advance(grant.interval * 1000);
    const token = await fetch(`${origin}/api/cli/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ device_code: grant.device_code }),
    });
    expect(((await token.json()) as { status: string }).status).toBe('authorized');
    // The key is in the team's Staging project, listed by the team's owner; none in the user's own account.
    const teamKeys = await team.call('get', `/api/projects/${staging.id}/keys`);
    expect(teamKeys.keys).toEqual([expect.objectContaining({ name: 'team-deploy (CLI)', source: 'cli' })]);
    const ownProject = (await user.call('get', '/api/projects')).projects[0].id as string;
    expect((await user.call('get', `/api/projects/${ownProject}/keys`)).keys).toEqual([]);
    for (const u of [user, team, club]) await u.ctx.close();
    expect(problems).toEqual([]);
  });

  it('tells a member with no account where they may create keys that they cannot approve; Deny still works', async () => {
    const owner = await apiUser('boss@example.com');
    const invited = await owner.call('post', `/api/accounts/${owner.accountId}/invitations`, { email: 'reader@example.com', role: 'viewer' });
    const ctx = await browser.newContext({ viewport: { width: 900, height: 1000 } });
    const joined = await ctx.request.post(`${origin}/api/auth/signup`, {
      headers: { origin },
      data: { email: 'reader@example.com', password: 'correct horse battery', invitation: new URL(invited.url).searchParams.get('invite') },
    });
    expect(joined.status()).toBe(201);
    const grant = await startGrant('read-only-tool');
    const page = watch(await ctx.newPage());
    await page.goto(grant.verification_url);
    await page.locator('#consent').waitFor({ state: 'visible' });
    expect(await page.isVisible('#no-account')).toBe(true);
    expect(await page.isHidden('#account-choice')).toBe(true);
    expect(await page.isHidden('#project-choice')).toBe(true);
    await page.check('#confirm');
    expect(await page.isDisabled('#approve')).toBe(true);
    await page.click('#deny');
    await page.locator('#done').waitFor({ state: 'visible' });
    expect(await page.textContent('#done-title')).toBe('Request denied');
    await ctx.close();
    await owner.ctx.close();
    expect(problems).toEqual([]);
  });

  it('says plainly when a code is unknown, and offers to enter another', async () => {
    const page = watch(await context.newPage());
    await page.goto(`${origin}/cli/auth?code=BBBB-BBBB`);
    await page.locator('#problem').waitFor({ state: 'visible' });
    expect(await page.textContent('#problem-title')).toBe('Unknown code');
    expect(await page.textContent('#problem-text')).toBe('Unknown code: check the code shown in your terminal');
    await page.screenshot({ path: new URL('06-unknown-code.png', SHOTS).pathname });

    // Typing a real code (lower case, no dash) on the entry form works too.
    const grant = await startGrant('typed-code');
    await page.goto(`${origin}/cli/auth`);
    await page.locator('#enter').waitFor({ state: 'visible' });
    await page.fill('#enter-code', grant.user_code.replace('-', '').toLowerCase());
    await page.click('#enter button[type=submit]');
    await page.locator('#consent').waitFor({ state: 'visible' });
    expect(await page.textContent('#user-code')).toBe(grant.user_code);
    await page.close();
    expect(problems).toEqual([]);
  });
});
