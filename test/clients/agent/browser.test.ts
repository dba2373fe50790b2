// Runs the built agent in real headless Chromium against a fake identify endpoint.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasChromium, launchChromium } from '../../support/browser.js';
import { z } from 'zod';
import type * as AgentModule from '../../../clients/agent/index.js';
import { buildAgent } from '../../../server/http/agentScript.js';
import { IdentifyRequestSchema } from '../../../contract/identify.js';
import { EXTRA_SIGNAL_NAMES, SIGNAL_NAMES, SPEC_SIGNAL_NAMES, signalValueSchemas, type SignalName, type SignalValues } from '../../../contract/signals.js';

const PAGE =
  '<!doctype html><html><head><meta charset="utf-8"><title>agent test</title></head><body><p>deviceid agent test</p><script src="/agent.js"></script></body></html>';
const FAKE_RESULT = { requestId: 'req_01JD0S3V6ZQ8Y0K2W3ZP4X5Y6Z', visitorId: 'iq_01JD0S3V6ZQ8Y0K2W3ZP4X5Y6Z' };

interface Captured {
  headers: IncomingHttpHeaders;
  body: z.infer<typeof IdentifyRequestSchema>;
  raw: { signals: Record<string, unknown> };
}

const envelope = z.object({ value: z.unknown(), duration: z.number().nonnegative() }).strict();

describe.skipIf(!hasChromium)('browser agent in headless Chromium', () => {
  let server: Server;
  let origin: string;
  let browser: Browser;
  const captured: Captured[] = [];

  beforeAll(async () => {
    const agentJs = await buildAgent();
    server = createServer((req, res) => {
      if (req.method === 'GET' && req.url === '/') {
        res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(PAGE);
      } else if (req.method === 'GET' && req.url === '/agent.js') {
        res.writeHead(200, { 'Content-Type': 'text/javascript' }).end(agentJs);
      } else if (req.method === 'POST' && req.url === '/v1/identify') {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          const raw = JSON.parse(Buffer.concat(chunks).toString('utf8'));
          captured.push({ headers: req.headers, body: IdentifyRequestSchema.parse(raw), raw });
          if (req.headers['x-api-key'] === 'bad') res.writeHead(401, { 'Content-Type': 'application/json' }).end('{"error":"Invalid or missing API key"}');
          else res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(FAKE_RESULT));
        });
      } else {
        res.writeHead(404).end();
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => server?.close(resolve));
  });

  async function openPage(page?: Page): Promise<Page> {
    const p = page ?? (await (await browser.newContext()).newPage());
    await p.goto(`${origin}/`);
    return p;
  }

  /** Runs DeviceId.load().get() in the page; resolves to the result or to the thrown error's fields. */
  async function identify(page: Page, apiKey = 'pk_test', get: AgentModule.GetOptions = {}) {
    const before = captured.length;
    const outcome = await page.evaluate(
      async ({ apiKey, get }) => {
        const { DeviceId } = window as unknown as { DeviceId: typeof AgentModule };
        try {
          const agent = await DeviceId.load({ apiKey, endpoint: location.origin });
          return { result: await agent.get(get) };
        } catch (e) {
          const err = e as AgentModule.DeviceIdError;
          return { error: { name: err.name, message: err.message, status: err.status, body: err.body } };
        }
      },
      { apiKey, get },
    );
    expect(captured.length).toBe(before + 1);
    return { ...outcome, request: captured[captured.length - 1]! };
  }

  const signal = <K extends SignalName>(req: Captured, name: K): SignalValues[K] => {
    const s = req.body.signals[name];
    if (!s) throw new Error(`signal ${name} was not collected`);
    return s.value as SignalValues[K];
  };

  it('posts at least 38 of the 41 signals and the optional extras, each valid against its schema with no unknown keys', async () => {
    const page = await openPage();
    const { result, request } = await identify(page, 'pk_test', { linkedId: 'user-42', tag: { plan: 'pro' } });
    expect(result).toEqual(FAKE_RESULT);

    expect(request.headers['x-api-key']).toBe('pk_test');
    expect(request.body).toMatchObject({ url: `${origin}/`, referrer: '', linkedId: 'user-42', tag: { plan: 'pro' } });
    expect(Math.abs(request.body.timestamp - Date.now())).toBeLessThan(60_000);

    const names = Object.keys(request.raw.signals);
    const missing = SPEC_SIGNAL_NAMES.filter((n) => !names.includes(n));
    expect(names.filter((n) => !(SIGNAL_NAMES as string[]).includes(n))).toEqual([]);
    expect(SPEC_SIGNAL_NAMES.length - missing.length, `missing: ${missing.join(', ')}`).toBeGreaterThanOrEqual(38);
    expect(names).toEqual(expect.arrayContaining([...EXTRA_SIGNAL_NAMES]));
    for (const name of names as SignalName[]) {
      const wrapped = envelope.parse(request.raw.signals[name]);
      const parsed = signalValueSchemas[name].strict().safeParse(wrapped.value);
      expect(parsed.success, `${name}: ${JSON.stringify(parsed.error?.issues)}`).toBe(true);
    }
    await page.context().close();
  });

  it('reports headless markers and no tampering in unmodified headless Chromium', async () => {
    const page = await openPage();
    const { request } = await identify(page);
    const automation = signal(request, 'automation');
    expect(automation.headlessUserAgent).toBe(true);
    expect(automation.webdriver).toBe(true);
    expect(signal(request, 'virtualMachine').softwareRenderer).toBe(true);
    expect(signal(request, 'tampering')).toEqual({ lieCount: 0, lies: [], canvasNoise: 0, audioNoise: 0 });
    expect(signal(request, 'canvas').isFarbled).toBe(false);
    // This machine's fonts (DejaVu, Liberation; Arial and Times New Roman are aliases of Liberation's) all have 2048
    // units per em, so each measures exactly.
    const metrics = signal(request, 'fontMetrics');
    expect(metrics.fonts).toBeGreaterThanOrEqual(1);
    expect(metrics.exact).toBe(metrics.fonts);
    await page.context().close();
  });

  it('flags a getter patched by page script as a lie', async () => {
    const page = await openPage();
    await page.evaluate(() => {
      Object.defineProperty(Navigator.prototype, 'hardwareConcurrency', { get: () => 64, configurable: true });
    });
    const { request } = await identify(page);
    expect(signal(request, 'navigator').hardwareConcurrency).toBe(64);
    expect(signal(request, 'tampering').lies).toEqual(['Navigator.hardwareConcurrency']);
    await page.context().close();
  });

  it('omits a hanging or throwing signal without holding up the others', async () => {
    const page = await openPage();
    await page.evaluate(() => {
      OfflineAudioContext.prototype.startRendering = () => new Promise<AudioBuffer>(() => undefined);
      HTMLCanvasElement.prototype.toDataURL = () => {
        throw new Error('blocked');
      };
    });
    const started = Date.now();
    const { request } = await identify(page);
    // The audio collector's own 2 s timeout bounds the wait.
    expect(Date.now() - started).toBeLessThan(5000);
    const names = Object.keys(request.raw.signals);
    expect(names).not.toContain('audio');
    expect(names).not.toContain('canvas');
    expect(names.length).toBeGreaterThanOrEqual(37);
    await page.context().close();
  });

  it('keeps the device token across reloads, restores it from cookie or IndexedDB, and issues another in a fresh context', async () => {
    const page = await openPage();
    const first = signal((await identify(page)).request, 'deviceToken');
    expect(first.token).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(first.storage).toBe('localStorage');
    expect(Math.abs(first.createdAt! - Date.now())).toBeLessThan(60_000);

    await page.reload();
    expect(signal((await identify(page)).request, 'deviceToken')).toEqual(first);

    await page.evaluate(() => localStorage.clear());
    await page.reload();
    expect(signal((await identify(page)).request, 'deviceToken')).toEqual({ ...first, storage: 'cookie' });

    await page.evaluate(() => localStorage.clear());
    await page.context().clearCookies();
    await page.reload();
    expect(signal((await identify(page)).request, 'deviceToken')).toEqual({ ...first, storage: 'indexedDB' });

    const other = await openPage();
    const fresh = signal((await identify(other)).request, 'deviceToken');
    expect(fresh.token).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(fresh.token).not.toBe(first.token);
    await page.context().close();
    await other.context().close();
  });

  it('rejects with an error carrying the status and body on a non-2xx answer', async () => {
    const page = await openPage();
    const { error } = await identify(page, 'bad');
    expect(error).toMatchObject({ name: 'DeviceIdError', status: 401, body: { error: 'Invalid or missing API key' } });
    expect(error?.message).toContain('401');
    await page.context().close();
  });
});
