// Identification in real Chromium: the agent on a customer's page, the same
// browser in a fresh context (no storage) at home and on a network its
// visitor never used, and a private window of a browser used with a
// profile, behind a proxy the service trusts.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasChromium, launchChromium, launchChromiumProfile } from '../../support/browser.js';
import { createHarness, type Harness } from '../../support/harness.js';
import { signUp } from '../../support/dashboard.js';

describe.skipIf(!hasChromium)('identification in real Chromium', () => {
  let h: Harness;
  let service: HttpServer;
  let shop: HttpServer;
  let browser: Browser;
  let shopUrl: string;
  let live: string;

  beforeAll(async () => {
    h = await createHarness(import.meta.filename, { TRUST_PROXY: '127.0.0.1/32,::1' });
    live = await (await signUp(h)).key('test');
    service = h.app.listen(0, '127.0.0.1');
    await new Promise((r) => service.once('listening', r));
    const serviceUrl = `http://127.0.0.1:${(service.address() as AddressInfo).port}`;
    shop = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(
        `<!doctype html><title>shop</title><script src="${serviceUrl}/agent.js"></script>
         <script>window.identify = (apiKey) => DeviceId.load({ apiKey, endpoint: ${JSON.stringify(serviceUrl)} }).then((a) => a.get());</script>`,
      );
    });
    shop.listen(0, 'localhost');
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

  /** A browser context whose identify calls reach the service from `ip` (the trusted proxy's X-Forwarded-For, added below the page). */
  async function identifyFrom(context: BrowserContext, ip: string, key = live): Promise<{ visitorId: string; visitCount: number }> {
    await context.unroute('**/v1/identify');
    await context.route('**/v1/identify', (route) => route.continue({ headers: { ...route.request().headers(), 'x-forwarded-for': ip } }));
    const page = await context.newPage();
    await page.goto(shopUrl);
    return page.evaluate((k) => (window as unknown as { identify(k: string): Promise<{ visitorId: string; visitCount: number }> }).identify(k), key);
  }

  it('names headless Chromium driven by Playwright a bad bot of the browser automation category', async () => {
    // Another customer's: this browser's visit is not the other tests' visitor.
    const context = await browser.newContext();
    const result = (await identifyFrom(context, '81.2.69.20', await (await signUp(h)).key('test'))) as unknown as {
      verdicts: { bot: { result: boolean; kind: string; info: Record<string, unknown> } };
    };
    await context.close();
    expect(result.verdicts.bot).toMatchObject({ result: true, kind: 'bad', info: { category: 'browser_automation', identity: 'unknown' } });
  }, 120_000);

  it('recognises the same browser without its storage, and re-joins it when it cleared storage on a new network', async () => {
    const home = await browser.newContext();
    const first = await identifyFrom(home, '81.2.69.10');
    h.clock.advance(3_600_000);
    expect((await identifyFrom(home, '81.2.69.10')).visitorId).toBe(first.visitorId);
    await home.close();

    // Storage gone, same network: the fingerprint links.
    h.clock.advance(24 * 3_600_000);
    const cleared = await browser.newContext();
    expect(await identifyFrom(cleared, '81.2.69.10')).toMatchObject({ visitorId: first.visitorId, visitCount: 3 });
    await cleared.close();

    // Storage gone on a network the visitor never used: whatever the first
    // answer, once the browser is back home its visits join the first visitor.
    h.clock.advance(24 * 3_600_000);
    const travelling = await browser.newContext();
    await identifyFrom(travelling, '2.125.160.10');
    h.clock.advance(24 * 3_600_000);
    expect(await identifyFrom(travelling, '81.2.69.10')).toMatchObject({ visitorId: first.visitorId, visitCount: 5 });
    await travelling.close();
  }, 120_000);

  it('recognises a private window of a browser used with its profile at home as the same visitor', async () => {
    // An account of its own: the browser of the case above is an identical device.
    const key = await (await signUp(h)).key('test');
    const dir = mkdtempSync(join(tmpdir(), 'deviceid-profile-'));
    try {
      const profile = await launchChromiumProfile(dir);
      const first = await identifyFrom(profile, '81.2.70.10', key);
      h.clock.advance(3_600_000);
      expect((await identifyFrom(profile, '81.2.70.10', key)).visitorId).toBe(first.visitorId);
      await profile.close();

      // The next day, a private window of that browser at home (an off-the-record context: no storage; headless
      // Chromium gives it the profile's quota, so the agent cannot tell it is private).
      h.clock.advance(24 * 3_600_000);
      const privateWindow = await browser.newContext();
      const seen = await identifyFrom(privateWindow, '81.2.70.10', key);
      await privateWindow.close();
      expect(seen).toMatchObject({ visitorId: first.visitorId, visitCount: 3 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
