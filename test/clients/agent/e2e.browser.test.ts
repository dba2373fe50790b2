// End to end with real components: a customer's page (its own origin) loads
// /agent.js from the service, the agent identifies headless Chromium through
// the real identify endpoint, and the typed Node client reads the full event.
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasChromium, launchChromium } from '../../support/browser.js';
import { createServerClient } from '../../../clients/node/index.js';
import { SIGNAL_NAMES } from '../../../contract/signals.js';
import { createHarness, type Harness } from '../../support/harness.js';
import { signUp } from '../../support/dashboard.js';

describe.skipIf(!hasChromium)('agent → identify → typed client, in real Chromium', () => {
  let h: Harness;
  let service: HttpServer;
  let shop: HttpServer;
  let browser: Browser;
  let serviceUrl: string;
  let shopUrl: string;
  let live: string;
  let secret: string;

  beforeAll(async () => {
    h = await createHarness(import.meta.filename);
    const c = await signUp(h);
    live = await c.key('test');
    secret = await c.key('secret');
    service = h.app.listen(0, '127.0.0.1');
    await new Promise((r) => service.once('listening', r));
    serviceUrl = `http://127.0.0.1:${(service.address() as AddressInfo).port}`;
    // The customer's site on another origin: identify goes cross-origin, as in production.
    shop = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(
        `<!doctype html><title>shop</title><p>shop</p><script src="${serviceUrl}/agent.js"></script>
         <script>window.identify = () => DeviceId.load({ apiKey: ${JSON.stringify(live)}, endpoint: ${JSON.stringify(serviceUrl)} }).then((a) => a.get({ linkedId: 'cart-1', tag: { 'a.b': 1 } }));</script>`,
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

  it('identifies, keeps the visitor across reloads and fresh contexts, and flags headless Chromium', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(shopUrl);
    const first = await page.evaluate(() => (window as unknown as { identify(): Promise<Record<string, unknown>> }).identify());
    expect(first.requestId).toMatch(/^req_/);
    expect(first.visitorId).toMatch(/^iq_/);
    expect((first.verdicts as { headless: { result: boolean } }).headless.result).toBe(true);
    expect((first.verdicts as { bot: { result: boolean } }).bot.result).toBe(true);
    expect(first.riskFactors).toEqual(expect.arrayContaining(['HEADLESS_BROWSER']));

    const client = createServerClient({ baseUrl: serviceUrl, secretKey: secret });
    const event = await client.getEvent(first.requestId as string);
    const collected = Object.keys(event.signals.client);
    expect(collected.length).toBeGreaterThanOrEqual(38);
    expect(collected.every((n) => (SIGNAL_NAMES as string[]).includes(n))).toBe(true);
    expect(event.signals.client.canvas?.hash).toEqual(expect.any(String));
    expect(event.signals.client.deviceToken?.token).toEqual(expect.any(String));
    expect(event).toMatchObject({ linkedId: 'cart-1', tag: { 'a.b': 1 }, url: shopUrl });

    await page.reload();
    const again = await page.evaluate(() => (window as unknown as { identify(): Promise<Record<string, unknown>> }).identify());
    expect(again.visitorId).toBe(first.visitorId);
    expect(again.visitCount).toBe(2);
    await context.close();

    // Storage cleared: a new context has no device token; the fingerprint still finds the visitor.
    const fresh = await browser.newContext();
    const freshPage = await fresh.newPage();
    await freshPage.goto(shopUrl);
    const third = await freshPage.evaluate(() => (window as unknown as { identify(): Promise<Record<string, unknown>> }).identify());
    expect(third.visitorId).toBe(first.visitorId);
    const thirdEvent = await client.getEvent(third.requestId as string);
    expect(thirdEvent.signals.client.deviceToken?.token).not.toBe(event.signals.client.deviceToken?.token);
    await fresh.close();
  }, 120_000);
});
