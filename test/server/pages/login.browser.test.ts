// The sign-in page in real headless Chromium. The audit's open redirect
// replayed: a genuine sign-in on `/login?next=/.//evil.example/phish` must
// stay on this origin (requests to other hosts are answered locally, so a
// redirect there would be seen and nothing leaves the machine). And an
// invitation link on an instance where sign-up needs one.
import type { Browser } from 'playwright-core';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasChromium, launchChromium, servedHarness, watchProblems } from '../../support/browser.js';

describe.skipIf(!hasChromium)('sign-in redirect in headless Chromium', () => {
  let origin: string;
  let closeService: () => Promise<void>;
  let browser: Browser;

  beforeAll(async () => {
    ({ origin, close: closeService } = await servedHarness(import.meta.filename));
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await closeService?.();
  });

  it.each(['/.//evil.example/phish', '/%2e//evil.example/phish', '/a/..//evil.example/phish'])(
    'a real sign-up and sign-in with next=%s lands on this origin',
    async (next) => {
      const problems: string[] = [];
      const context = await browser.newContext();
      const offsite: string[] = [];
      await context.route(
        (url) => url.origin !== origin,
        (route) => {
          offsite.push(route.request().url());
          return route.fulfill({ status: 200, contentType: 'text/html', body: '<p>phished</p>' });
        },
      );
      const page = watchProblems(await context.newPage(), problems);
      await page.goto(`${origin}/login?next=${encodeURIComponent(next)}`);
      await page.getByRole('button', { name: 'Create one' }).click();
      await page.fill('#email', `redirect-${Date.now()}@example.com`);
      await page.fill('#password', 'quiet-otter-lantern-47');
      await page.click('#submit');
      await page.waitForURL(`${origin}/dashboard`);
      // Signed in now: the server-side redirect of the login page must not leave either.
      await page.goto(`${origin}/login?next=${encodeURIComponent(next)}`);
      expect(new URL(page.url()).origin).toBe(origin);
      expect(offsite).toEqual([]);
      expect(problems).toEqual([]);
      await context.close();
    },
  );

  it('its buttons wait for its script: a quick "Create one" and sign-up cannot go off as a sign-in', async () => {
    const context = await browser.newContext();
    let release!: () => void;
    const scriptHeld = new Promise<void>((r) => (release = r));
    await context.route(`${origin}/assets/login.js`, async (route) => {
      await scriptHeld;
      await route.continue();
    });
    const page = await context.newPage();
    await page.goto(`${origin}/login`, { waitUntil: 'commit' });
    await page.locator('#toggle').waitFor();
    expect(await page.isDisabled('#toggle')).toBe(true);
    expect(await page.isDisabled('#submit')).toBe(true);
    release();
    // Playwright's click waits for the button to be enabled, as a person has to.
    await page.getByRole('button', { name: 'Create one' }).click();
    expect(await page.textContent('#submit')).toBe('Create account');
    await page.fill('#email', `quick-${Date.now()}@example.com`);
    await page.fill('#password', 'quiet-otter-lantern-47');
    await page.click('#submit');
    await page.waitForURL(`${origin}/dashboard`);
    await context.close();
  });

  it('an invitation link opens the sign-up form, and signing up through it works where sign-up needs one', async () => {
    const invited = await servedHarness(import.meta.filename, { SIGNUP: 'invite' });
    try {
      const admin = request.agent(invited.h.app);
      await admin.post('/api/auth/signup').set('origin', invited.origin).send({ email: 'admin@example.com', password: 'quiet-otter-lantern-47' });
      const { url } = (await admin.post('/api/admin/invitations').set('origin', invited.origin).send({ email: 'guest@example.com' })).body;
      const problems: string[] = [];
      const context = await browser.newContext();
      const page = watchProblems(await context.newPage(), problems);
      await page.goto(url);
      expect(await page.textContent('#title')).toBe('Create an account');
      await page.fill('#email', 'guest@example.com');
      await page.fill('#password', 'quiet-otter-lantern-47');
      await page.click('#submit');
      await page.waitForURL(`${invited.origin}/dashboard`);
      // A member: the plan is the administrator's to assign.
      await page.locator('#plan-assigned').waitFor({ state: 'visible' });
      expect(await page.isVisible('#plan-form')).toBe(false);
      expect(problems).toEqual([]);
      await context.close();
    } finally {
      await invited.close();
    }
  });
});
