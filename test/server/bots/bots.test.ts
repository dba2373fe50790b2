// Bots by name over HTTP with the real database (issue: bots by name): a
// crawler's name is good only when its operator's addresses or a Web Bot Auth
// signature prove it; the same name from elsewhere is spoofed, bad and more
// suspect; search finds each by category and identity.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BotJudge } from '../../../server/bots/judge.js';
import { BotNames } from '../../../server/bots/verify.js';
import { WebBotAuth } from '../../../server/bots/webBotAuth.js';
import { signUp } from '../../support/dashboard.js';
import { createHarness, type Harness } from '../../support/harness.js';
import { deviceValues, identifyBody } from '../../support/signals.js';
import { directoryJson, makeAgentKey, signRequest } from '../../support/webBotAuth.js';

const GOOGLEBOT =
  'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Googlebot/2.1; +http://www.google.com/bot.html) Chrome/130.0.6723.69 Safari/537.36';
const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36';
/** Inside Google's published crawler ranges (server/bots/data/googlebot.json). */
const GOOGLE_IP = '192.178.4.10';
const RESIDENTIAL_IP = '81.2.69.40';

const key = makeAgentKey();
let directory: Server;
let agent: string;
let h: Harness;
let live: string;
let secret: string;

beforeAll(async () => {
  directory = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/http-message-signatures-directory+json' });
    res.end(directoryJson([key]));
  });
  await new Promise<void>((resolve) => directory.listen(0, '127.0.0.1', resolve));
  agent = `http://127.0.0.1:${(directory.address() as AddressInfo).port}`;
  h = await createHarness(
    import.meta.filename,
    { PLANS: '{"free":{"rps":100000,"monthly":1000000}}', TRUST_PROXY: '127.0.0.1/32,::1' },
    undefined,
    // The process's own judge, but for a key directory on this machine (http, loopback: refused in production).
    { bots: (clock) => new BotJudge(new BotNames({ now: () => clock.now() }), new WebBotAuth({ now: () => clock.now(), allowHttp: true })) },
  );
  const c = await signUp(h);
  [live, secret] = [await c.key('live'), await c.key('secret')];
});
afterAll(async () => {
  await h.close();
  await new Promise((resolve) => directory.close(resolve));
});

let seed = 55_000;
async function identify(ua: string, ip: string, headers: Record<string, string> = {}) {
  const r = request(h.app).post('/v1/identify').set('x-api-key', live).set('user-agent', ua).set('x-forwarded-for', ip);
  for (const [k, v] of Object.entries(headers)) r.set(k, v);
  const res = await r.send(identifyBody(deviceValues(++seed)));
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as {
    requestId: string;
    suspectScore: number;
    riskFactors: string[];
    verdicts: { bot: { result: boolean; kind: string; info?: Record<string, unknown> } };
  };
}

const search = async (query: Record<string, string>) => {
  const res = await request(h.app)
    .get('/v1/events')
    .query({ limit: '100', ...query })
    .set('x-api-key', secret);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return (res.body.events as { requestId: string }[]).map((e) => e.requestId);
};

describe('bots by name', () => {
  let verified: string;
  let spoofed: string;
  let signed: string;
  let human: string;

  it('Googlebot from a Google range is good and verified, with the list date that judged it', async () => {
    const a = await identify(GOOGLEBOT, GOOGLE_IP);
    expect(a.verdicts.bot).toMatchObject({
      result: true,
      kind: 'good',
      info: { name: 'Googlebot', provider: 'Google', category: 'search_crawler', identity: 'verified' },
    });
    expect(a.verdicts.bot.info!.listDate).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    verified = a.requestId;
  });

  it('the same User-Agent from a residential address is bad and spoofed, and more suspect than a human there', async () => {
    const a = await identify(GOOGLEBOT, RESIDENTIAL_IP);
    expect(a.verdicts.bot).toMatchObject({ result: true, kind: 'bad', info: { name: 'Googlebot', identity: 'spoofed' } });
    expect(a.riskFactors).toContain('SPOOFED_BOT');
    // The same request without the claim (a test client's HTTP stack reads as automation, but names no bot).
    const person = await identify(CHROME, RESIDENTIAL_IP);
    expect(person.verdicts.bot.info).toMatchObject({ name: null, identity: 'unknown' });
    expect(person.riskFactors).not.toContain('SPOOFED_BOT');
    expect(a.suspectScore).toBeGreaterThan(person.suspectScore);
    spoofed = a.requestId;
    human = person.requestId;
  });

  it('a request signed with a key its agent’s directory publishes is good and signed; replayed, expired or tampered it is not', async () => {
    const now = Math.floor(h.clock.now() / 1000);
    // The signature's headers, the request addressed to 127.0.0.1 (what @authority covers).
    const signedHeaders = (o: { headers: Record<string, unknown> }) => {
      const { host: _, ...rest } = o.headers;
      return { ...(rest as Record<string, string>), host: '127.0.0.1' };
    };
    const sig = signRequest({ key, agent, authority: '127.0.0.1', created: now, expires: now + 60 });
    const headers = signedHeaders(sig);
    const a = await identify(CHROME, RESIDENTIAL_IP, headers);
    expect(a.verdicts.bot).toMatchObject({ kind: 'good', info: { category: 'ai_agent', identity: 'signed' } });
    signed = a.requestId;
    // The same signature again: a replay.
    expect((await identify(CHROME, RESIDENTIAL_IP, headers)).verdicts.bot).toMatchObject({ kind: 'bad', info: { identity: 'spoofed' } });
    // Expired.
    const old = signRequest({ key, agent, authority: '127.0.0.1', created: now - 600, expires: now - 300 });
    expect((await identify(CHROME, RESIDENTIAL_IP, signedHeaders(old))).verdicts.bot.kind).toBe('bad');
    // Tampered: signed for another site.
    const other = signRequest({ key, agent, authority: 'elsewhere.example', created: now, expires: now + 60 });
    expect((await identify(CHROME, RESIDENTIAL_IP, signedHeaders(other))).verdicts.bot.kind).toBe('bad');
    // A key the directory does not publish.
    const stranger = signRequest({ key: makeAgentKey(), agent, authority: '127.0.0.1', created: now, expires: now + 60 });
    expect((await identify(CHROME, RESIDENTIAL_IP, signedHeaders(stranger))).verdicts.bot.info).toMatchObject({ identity: 'spoofed' });
  });

  it('a signature whose key directory does not answer in time proves nothing and costs identify at most the directory budget', async () => {
    const silent = createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const slow = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
      const now = Math.floor(h.clock.now() / 1000);
      const sig = signRequest({ key, agent: slow, authority: '127.0.0.1', created: now, expires: now + 60 });
      const { host: _, ...headers } = sig.headers as Record<string, string>;
      const started = performance.now();
      const a = await identify(CHROME, RESIDENTIAL_IP, { ...headers, host: '127.0.0.1' });
      console.log(`identify with a silent key directory: ${Math.round(performance.now() - started)} ms (budget 300 ms)`);
      expect(a.verdicts.bot.info?.identity).not.toBe('signed');
      expect(a.verdicts.bot.info?.identity).not.toBe('spoofed');
      expect(a.riskFactors).not.toContain('SPOOFED_BOT');
    } finally {
      silent.closeAllConnections();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it('search finds each by kind, category and identity', async () => {
    expect(await search({ bot: 'good' })).toEqual(expect.arrayContaining([verified, signed]));
    expect(await search({ bot: 'good' })).not.toContain(spoofed);
    expect(await search({ bot: 'bad' })).toContain(spoofed);
    const crawlers = await search({ botCategory: 'search_crawler' });
    expect(crawlers).toEqual(expect.arrayContaining([verified, spoofed]));
    expect(crawlers).not.toContain(signed);
    expect(await search({ botIdentity: 'verified' })).toEqual([verified]);
    expect(await search({ botIdentity: 'signed' })).toEqual([signed]);
    expect(await search({ botIdentity: 'spoofed' })).toContain(spoofed);
    expect(await search({ botCategory: 'search_crawler', botIdentity: 'spoofed' })).toEqual([spoofed]);
    for (const q of [{ botIdentity: 'verified' }, { botCategory: 'ai_agent' }] as Record<string, string>[]) expect(await search(q)).not.toContain(human);
    const bad = await request(h.app).get('/v1/events').query({ botCategory: 'robot' }).set('x-api-key', secret);
    expect(bad.status).toBe(400);
  });
});
