// The first-party proxy in real Chromium: a shop on one loopback origin
// serves the agent and identify under /metrics through @deviceid/proxy's
// Express middleware; the service runs on another origin. The service's
// device cookie is HttpOnly on the shop's host; once the agent's storage is
// gone (localStorage, IndexedDB and its own script cookie, as Safari's ITP
// deletes them), the cookie brings the same visitor back.
import express from 'express';
import { createHash } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProxyMiddleware } from '../../../clients/proxy/index.js';
import { DEVICE_COOKIE } from '../../../contract/proxy.js';
import { hasChromium, launchChromium } from '../../support/browser.js';
import { signUp } from '../../support/dashboard.js';
import { createHarness, type Harness } from '../../support/harness.js';

describe.skipIf(!hasChromium)('first-party proxy in real Chromium', () => {
  let h: Harness;
  let service: Server;
  let shop: Server;
  let browser: Browser;
  let shopUrl: string;
  let accountId: string;
  /** The cookie names each identify reached the shop with. */
  const arrived: string[][] = [];

  beforeAll(async () => {
    h = await createHarness(import.meta.filename);
    const c = await signUp(h);
    accountId = c.accountId;
    const key = await c.key('test');
    const secret = (await c.agent.post(`/api/projects/${c.projectId}/proxy/secret`).set('origin', c.origin).send({})).body.secret as string;
    service = h.app.listen(0, '127.0.0.1');
    await new Promise((r) => service.once('listening', r));
    const serviceUrl = `http://127.0.0.1:${(service.address() as AddressInfo).port}`;

    const app = express();
    app.use('/metrics/v1/identify', (req, _res, next) => {
      arrived.push((req.headers.cookie ?? '').split(/;\s*/).map((p) => p.split('=')[0]!));
      next();
    });
    app.use(createProxyMiddleware({ serviceUrl, secret, pathPrefix: '/metrics' }));
    app.get('/', (_req, res) => {
      res.type('html').send(
        `<!doctype html><title>shop</title><script src="/metrics/agent.js"></script>
         <script>window.identify = () => DeviceId.load({ apiKey: ${JSON.stringify(key)}, endpoint: '/metrics' }).then((a) => a.get());</script>`,
      );
    });
    shop = app.listen(0, 'localhost');
    await new Promise((r) => shop.once('listening', r));
    shopUrl = `http://localhost:${(shop.address() as AddressInfo).port}/`;
    browser = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await new Promise((r) => shop?.close(r));
    await new Promise((r) => service?.close(r));
    await h?.close();
  });

  it('after localStorage, IndexedDB and the agent’s own cookie are cleared, the server-set cookie brings the same visitor back', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(shopUrl);
    const identify = () => page.evaluate(() => (window as unknown as { identify(): Promise<{ visitorId: string; visitCount: number }> }).identify());
    const first = await identify();
    expect(first.visitorId).toMatch(/^iq_/);

    // The device cookie: set on the shop's host by the service's answer, out of the page's reach.
    const cookies = await context.cookies(shopUrl);
    const device = cookies.find((c) => c.name === DEVICE_COOKIE);
    expect(device).toMatchObject({ domain: 'localhost', path: '/', httpOnly: true, sameSite: 'Lax' });
    expect(device!.expires - Date.now() / 1000).toBeGreaterThan(399 * 24 * 3600);
    expect(await page.evaluate(() => document.cookie)).not.toContain(`${DEVICE_COOKIE}=`);
    // Nothing went to the service's own origin from the page.
    expect(await context.cookies(`http://127.0.0.1:${(service.address() as AddressInfo).port}/`)).toEqual([]);

    // The agent's storage is gone, as ITP deletes it after 7 days: localStorage, IndexedDB, and its script-written cookie.
    h.clock.advance(8 * 24 * 3_600_000);
    await page.evaluate(async () => {
      localStorage.clear();
      await new Promise<void>((resolve, reject) => {
        const r = indexedDB.deleteDatabase('deviceid');
        r.onsuccess = () => resolve();
        r.onerror = () => reject(r.error ?? new Error('deleteDatabase failed'));
        r.onblocked = () => resolve();
      });
    });
    await context.clearCookies({ name: '_did' });
    expect((await context.cookies(shopUrl)).map((c) => c.name)).toEqual([DEVICE_COOKIE]);

    await page.reload();
    const again = await identify();
    expect(again.visitorId).toBe(first.visitorId);
    expect(again.visitCount).toBe(2);
    // The second identify reached the shop with the device cookie (the agent's own was recreated afterwards at most).
    expect(arrived.at(-1)).toContain(DEVICE_COOKIE);
    // It names the visitor in the identity index, beside the agent's new token.
    const token = device!.value.split('.')[1]!;
    expect(await h.store.identity.tokenOwner(accountId, createHash('sha256').update(`cookie:${token}`).digest('base64url'))).toBe(first.visitorId);
    await context.close();
  }, 120_000);
});
