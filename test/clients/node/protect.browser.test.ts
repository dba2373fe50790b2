// protect() end to end in real headless Chromium: a shop (its own origin)
// serves a login page that loads /agent.js from the service (another origin)
// and identifies, then POSTs the login with the requestId in the
// deviceid-request-id header. The shop's POST /login is behind protect(),
// which claims the requestId with the secret key; the project's rule blocks
// bad bots, and headless Chromium is one: the page receives the rule's 403
// and its body, and the login handler never runs. The page cannot choose
// otherwise: it sends only a requestId, and a replay of it is refused.
import express from 'express';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServerClient, protect } from '../../../clients/node/index.js';
import { hasChromium, launchChromium, watchProblems } from '../../support/browser.js';
import { signUp } from '../../support/dashboard.js';
import { createHarness, type Harness } from '../../support/harness.js';
import { listenApp, type Listening } from '../../support/httpServer.js';

interface Attempt {
  requestId: string;
  status: number;
  contentType: string | null;
  body: string;
}

describe.skipIf(!hasChromium)('protect() against headless Chromium', () => {
  let h: Harness;
  let service: Listening;
  let shop: Listening;
  let browser: Browser;
  let secretKey: string;
  const handled: unknown[] = [];

  beforeAll(async () => {
    h = await createHarness(import.meta.filename);
    service = await listenApp(h.app);
    const c = await signUp(h);
    const key = await c.key('test');
    secretKey = await c.key('secret');
    await createServerClient({ baseUrl: service.url, secretKey }).putRuleset({
      rules: [
        {
          id: 'block-bots',
          name: 'Block bots',
          expression: "verdicts.bot.result && verdicts.bot.kind == 'bad'",
          action: 'block',
          response: { status: 403, headers: { 'content-type': 'application/json' }, body: '{"error":"no bots"}' },
        },
      ],
    });

    const app = express();
    app.get('/', (_req, res) => {
      res.type('html').send(
        `<!doctype html><title>login</title><script src="${service.url}/agent.js"></script>
         <script>
           const login = (requestId) => fetch('/login', { method: 'POST', headers: { 'content-type': 'application/json', 'deviceid-request-id': requestId }, body: JSON.stringify({ user: 'ann', password: 'pw' }) })
             .then(async (r) => ({ requestId, status: r.status, contentType: r.headers.get('content-type'), body: await r.text() }));
           window.signIn = () => DeviceId.load({ apiKey: ${JSON.stringify(key)}, endpoint: ${JSON.stringify(service.url)} }).then((a) => a.get()).then((r) => login(r.requestId));
           window.replay = login;
         </script>`,
      );
    });
    app.post('/login', express.json(), protect({ baseUrl: service.url, secretKey }), (req, res) => {
      handled.push(req.deviceid);
      res.json({ welcome: (req.body as { user: string }).user });
    });
    shop = await listenApp(app);
    browser = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await shop?.close();
    await service?.close();
    await h?.close();
  });

  it('the page identifies and signs in with its requestId: headless Chromium gets the rule’s 403 and body, the handler never runs', async () => {
    const context = await browser.newContext();
    const problems: string[] = [];
    const page = watchProblems(await context.newPage(), problems);
    // The shop on localhost, the service on 127.0.0.1: identify goes cross-origin, as in production.
    await page.goto(shop.url.replace('127.0.0.1', 'localhost'));
    const first = await page.evaluate(() => (window as unknown as { signIn(): Promise<Attempt> }).signIn());
    expect(first.requestId).toMatch(/^req_/);
    expect(first).toMatchObject({ status: 403, contentType: 'application/json', body: '{"error":"no bots"}' });
    expect(handled).toEqual([]);

    // The decision was the service's, read with the secret key: the event says why.
    const event = await createServerClient({ baseUrl: service.url, secretKey }).getEvent(first.requestId);
    expect(event.decision).toMatchObject({ action: 'block', ruleId: 'block-bots' });
    expect(event.verdicts.bot).toMatchObject({ result: true, kind: 'bad' });

    // Sending the same requestId again: refused as a replay, still not handled.
    const again = await page.evaluate((id) => (window as unknown as { replay(id: string): Promise<Attempt> }).replay(id), first.requestId);
    expect(again).toMatchObject({
      status: 403,
      body: '{"error":"This requestId was already used for a protected request: identify again","code":"request_id_used"}',
    });
    expect(handled).toEqual([]);
    expect(problems.filter((p) => !/403/.test(p))).toEqual([]);
    await context.close();
  }, 120_000);
});
