// The dashboard's webhooks and sealed-results panel in headless Chromium:
// add an endpoint (its secret shown once), see a real delivery in the log
// and redeliver it, rotate the secret, turn sealing on (key shown once) and
// off, remove the endpoint. Screenshots go to test-results/dashboard/.
import { mkdirSync } from 'node:fs';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unseal, verifyWebhook } from '../../../clients/node/index.js';
import type { Services } from '../../../server/services.js';
import { hasChromium, launchChromium, servedHarness, watchProblems } from '../../support/browser.js';
import type { Harness } from '../../support/harness.js';
import { scripted, type Listening, type Seen } from '../../support/httpServer.js';
import { deviceValues, identifyBody } from '../../support/signals.js';

const SHOTS = new URL('../../../test-results/dashboard/', import.meta.url);

describe.skipIf(!hasChromium)('webhooks and sealed results in the dashboard', () => {
  let origin: string;
  let h: Harness;
  let closeService: () => Promise<void>;
  let browser: Browser;
  let rx: Listening & { seen: Seen[] };
  const problems: string[] = [];

  beforeAll(async () => {
    ({ h, origin, close: closeService } = await servedHarness(import.meta.filename, { WEBHOOKS_ALLOW_PRIVATE: 'true' }));
    mkdirSync(SHOTS, { recursive: true });
    browser = await launchChromium();
    rx = await scripted((_req, _n, res) => res.writeHead(204).end());
  });
  afterAll(async () => {
    await (h?.app.locals.services as Services | undefined)?.webhooks.idle();
    await rx?.close();
    await browser?.close();
    await closeService?.();
  });

  it('manages endpoints, shows deliveries with redeliver, and turns sealing on and off', async () => {
    const context = await browser.newContext({ viewport: { width: 1200, height: 1400 } });
    await context.clock.setFixedTime(h.clock.now());
    const page = watchProblems(await context.newPage(), problems);
    await page.goto(`${origin}/login?next=%2Fdashboard`);
    await page.getByRole('button', { name: 'Create one', exact: true }).click();
    await page.fill('#email', 'hooks-user@example.com');
    await page.fill('#password', 'correct horse battery');
    await page.click('#submit');
    await page.waitForURL(`${origin}/dashboard`);
    const nav = (name: string) => page.locator('.dash-nav').getByRole('link', { name, exact: true }).click();
    await nav('Sealed results');
    await page.locator('#sealing-state', { hasText: 'Off' }).waitFor();
    await nav('Webhooks');
    await page.locator('#hooks-empty').waitFor({ state: 'visible' });

    // A live key to identify with.
    await nav('API keys');
    await page.fill('#key-name', 'site');
    await page.selectOption('#key-type', 'live');
    await page.click('#key-form button[type=submit]');
    const live = await page.locator('#new-key-value').inputValue();
    await nav('Webhooks');
    await page.locator('#hooks-empty').waitFor({ state: 'visible' });

    // Add an endpoint: the secret is shown once.
    await page.fill('#hook-url', `${rx.url}/deviceid`);
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const secretField = page.locator('#hook-secret input');
    await secretField.waitFor();
    const secret = await secretField.inputValue();
    expect(secret).toMatch(/^whsec_/);
    expect(await page.locator('#hooks-body tr td').first().textContent()).toBe(`${rx.url}/deviceid`);
    await page.screenshot({ path: new URL('20-webhooks.png', SHOTS).pathname, fullPage: true });
    await page.locator('#hook-secret').getByRole('button', { name: 'Dismiss' }).click();
    expect(await page.locator('#hook-secret input').count()).toBe(0);

    // An identification is delivered, signed; the log shows it and can redeliver it.
    const res = await fetch(`${origin}/v1/identify`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': live },
      body: JSON.stringify(identifyBody(deviceValues(77))),
    });
    const { requestId } = (await res.json()) as { requestId: string };
    await (h.app.locals.services as Services).webhooks.idle();
    expect(verifyWebhook(rx.seen[0]!.body, rx.seen[0]!.headers['deviceid-signature'], secret, { now: h.clock.now() }).requestId).toBe(requestId);
    await page.getByRole('button', { name: `Deliveries of ${rx.url}/deviceid` }).click();
    await page.locator('#deliveries').waitFor({ state: 'visible' });
    expect(await page.locator('#deliveries-body tr td').allTextContents()).toEqual([requestId, 'delivered', '1', 'HTTP 204', '—', 'Redeliver']);
    await page.getByRole('button', { name: `Redeliver ${requestId}` }).click();
    await page.locator('#hook-status', { hasText: 'Redelivering' }).waitFor();
    await (h.app.locals.services as Services).webhooks.idle();
    expect(rx.seen).toHaveLength(2);

    // Rotate: a new secret, shown once, signs from now on.
    await page.getByRole('button', { name: `Rotate the secret of ${rx.url}/deviceid` }).click();
    await page.locator('#hook-secret input').waitFor();
    const rotated = await page.locator('#hook-secret input').inputValue();
    expect(rotated).not.toBe(secret);
    expect(await page.locator('#hooks-body tr td').nth(1).textContent()).toBe(`…${rotated.slice(-4)}`);

    // Sealed results: on (key shown once), identify answers a blob the key opens; off again.
    await nav('Sealed results');
    await page.getByRole('button', { name: 'Turn on' }).click();
    await page.locator('#sealing-secret input').waitFor();
    const key = await page.locator('#sealing-secret input').inputValue();
    expect(await page.textContent('#sealing-state')).toContain('On since');
    const sealed = (await (
      await fetch(`${origin}/v1/identify`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': live },
        body: JSON.stringify(identifyBody(deviceValues(78))),
      })
    ).json()) as { sealedResult: string };
    expect(unseal(sealed.sealedResult, key, { now: h.clock.now() }).visitorId).toMatch(/^iq_/);
    await page.screenshot({ path: new URL('21-sealing.png', SHOTS).pathname, fullPage: true });
    await page.getByRole('button', { name: 'Turn off' }).click();
    await page.locator('#sealing-state', { hasText: 'Off' }).waitFor();
    expect(await page.locator('#sealing-secret input').count()).toBe(0);

    await nav('Webhooks');
    await page.getByRole('button', { name: `Remove ${rx.url}/deviceid` }).click();
    await page.locator('#hooks-empty').waitFor({ state: 'visible' });
    await (h.app.locals.services as Services).webhooks.idle();
    expect(problems).toEqual([]);
    await context.close();
  });
});
