// The edge stage through identify: client IP behind trusted proxies, real
// geolocation and ASN data, IP lists from files, HTTP client classification,
// and the verdicts and server signals they drive.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness } from '../../support/harness.js';
import { signUp } from '../../support/dashboard.js';
import { deviceValues, identifyBody } from '../../support/signals.js';

const lists = mkdtempSync(join(tmpdir(), 'deviceid-lists-'));
writeFileSync(join(lists, 'tor-exits.txt'), '185.220.100.240\n');
writeFileSync(join(lists, 'blocklist.netset'), '# sample\n45.155.205.0/24\n');
writeFileSync(join(lists, 'vpn-ranges.txt'), '89.187.160.0/24\n');
writeFileSync(join(lists, 'proxy.txt'), '103.152.112.145:80\n');
// Whole networks, as refresh-lists fetches them: Cyberzone (Surfshark) and CenturyLink's hosting AS.
writeFileSync(join(lists, 'vpn-asn.txt'), 'AS209854 # Surfshark\n');
writeFileSync(join(lists, 'datacenter-asn.txt'), 'AS3561 # Savvis\n');

let h: Harness;
let proxied: Harness;
let live: string;
let proxiedLive: string;
let proxiedSecret: string;
beforeAll(async () => {
  const env = { PLANS: '{"free":{"rps":100000,"monthly":1000000}}', LISTS_DIR: lists };
  h = await createHarness(import.meta.filename, env);
  proxied = await createHarness(import.meta.filename, { ...env, TRUST_PROXY: '127.0.0.1/32,::1' });
  const a = await signUp(h);
  live = await a.key('live');
  const b = await signUp(proxied);
  [proxiedLive, proxiedSecret] = [await b.key('live'), await b.key('secret')];
});
afterAll(async () => {
  await h.close();
  await proxied.close();
  rmSync(lists, { recursive: true, force: true });
});

let seed = 20_000;
type V = ReturnType<typeof deviceValues>;

async function identifyFrom(ip: string, v: V = deviceValues(++seed), headers: Record<string, string> = {}) {
  let req = request(proxied.app).post('/v1/identify').set('x-api-key', proxiedLive).set('x-forwarded-for', ip);
  for (const [k, val] of Object.entries(headers)) req = req.set(k, val);
  const res = await req.send(identifyBody(v));
  expect(res.status).toBe(200);
  const event = await request(proxied.app).get(`/v1/events/${res.body.requestId}`).set('authorization', `Bearer ${proxiedSecret}`);
  return { result: res.body, event: event.body };
}

describe('client IP', () => {
  it('ignores X-Forwarded-For from an untrusted peer', async () => {
    const res = await request(h.app)
      .post('/v1/identify')
      .set('x-api-key', live)
      .set('x-forwarded-for', '8.8.8.8')
      .send(identifyBody(deviceValues(++seed)));
    expect(res.body.ip).toMatch(/^(127\.0\.0\.1|::1)$/);
    expect(res.body.ipLocation.country).toBe('');
  });

  it('believes X-Forwarded-For from a trusted proxy and geolocates the client', async () => {
    const { result, event } = await identifyFrom('8.8.8.8');
    expect(result.ip).toBe('8.8.8.8');
    expect(result.ipLocation).toMatchObject({ country: 'US', latitude: expect.any(Number), longitude: expect.any(Number) });
    expect(event.signals.server.asn).toEqual({ asn: 15169, org: expect.stringMatching(/google/i), category: 'DATACENTER', isDatacenter: true });
    expect(event.signals.server.ipNetwork).toMatchObject({ version: 4, isPrivate: false, prefix: expect.stringMatching(/\/\d+$/) });
    expect(result.riskFactors).toContain('DATACENTER_ASN');
    expect(result.botProbability).toBe(0.3);
  });

  it('normalises IPv6 and IPv4-mapped addresses before any lookup', async () => {
    const v6 = await identifyFrom('2001:4860:4860::8888');
    expect(v6.result.ip).toBe('2001:4860:4860::8888');
    expect(v6.event.signals.server.asn.asn).toBe(15169);
    expect(v6.event.signals.server.ipNetwork.version).toBe(6);
    const mapped = await identifyFrom('::ffff:8.8.8.8');
    expect(mapped.result.ip).toBe('8.8.8.8');
    expect(mapped.event.signals.server.ipNetwork.version).toBe(4);
  });

  it('gives private addresses an honest empty location', async () => {
    const { result, event } = await identifyFrom('10.1.2.3');
    expect(result.ipLocation).toEqual({ country: '', city: '', region: '', latitude: null, longitude: null });
    expect(event.signals.server.ipNetwork.isPrivate).toBe(true);
    expect(event.signals.server.asn).toEqual({ asn: null, org: '', category: 'UNKNOWN', isDatacenter: false });
  });
});

describe('IP lists', () => {
  it('Tor exit: tor verdict, TOR_EXIT_NODE and category TOR_EXIT', async () => {
    const { result, event } = await identifyFrom('185.220.100.240');
    expect(result.verdicts.tor.result).toBe(true);
    expect(result.riskFactors).toContain('TOR_EXIT_NODE');
    expect(event.signals.server.ipNetwork.isTorExit).toBe(true);
    expect(event.signals.server.asn.category).toBe('TOR_EXIT');
    const clean = await identifyFrom('185.220.100.241');
    expect(clean.result.verdicts.tor.result).toBe(false);
    expect(clean.event.signals.server.ipNetwork.isTorExit).toBe(false);
  });

  it('blocklist, VPN range and proxy list each drive their verdict', async () => {
    const blocked = await identifyFrom('45.155.205.9');
    expect(blocked.result.verdicts.ipBlocklist.result).toBe(true);
    expect(blocked.result.riskFactors).toContain('IP_BLOCKLISTED');
    const vpn = await identifyFrom('89.187.160.10');
    expect(vpn.result.verdicts.vpn).toEqual({ result: true, confidence: 0.95 });
    expect(vpn.event.signals.server.vpnDetection).toEqual({ verdict: 'detected', confidence: 0.95 });
    expect(vpn.result.riskFactors).toContain('VPN_DETECTED');
    const proxy = await identifyFrom('103.152.112.145');
    expect(proxy.result.verdicts.proxy.result).toBe(true);
    expect(proxy.result.riskFactors).toContain('PROXY');
    expect(proxy.result.suspectScore).toBe(Math.round((100 * 14) / 91));
  });

  it('an AS on the VPN or datacenter AS list sets the category of its whole network', async () => {
    const vpn = await identifyFrom('5.182.103.7');
    expect(vpn.event.signals.server.asn).toEqual({ asn: 209854, org: 'Cyberzone S.A.', category: 'VPN_COMMERCIAL', isDatacenter: true });
    expect(vpn.event.signals.server.vpnDetection).toEqual({ verdict: 'detected', confidence: 0.8 });
    expect(vpn.event.signals.server.ipNetwork.isVpn).toBe(false); // the address itself is on no list
    const hosted = await identifyFrom('5.157.164.9');
    expect(hosted.event.signals.server.asn).toMatchObject({ asn: 3561, category: 'DATACENTER', isDatacenter: true });
    expect(hosted.result.riskFactors).toContain('DATACENTER_ASN');
  });

  it('says null, not false, when a list is not configured', async () => {
    const none = await createHarness(import.meta.filename, { LISTS_DIR: join(lists, 'missing'), TRUST_PROXY: '127.0.0.1/32,::1' });
    try {
      const c = await signUp(none);
      const [k, s] = [await c.key('live'), await c.key('secret')];
      const r = await request(none.app)
        .post('/v1/identify')
        .set('x-api-key', k)
        .set('x-forwarded-for', '185.220.100.240')
        .send(identifyBody(deviceValues(++seed)));
      const e = await request(none.app).get(`/v1/events/${r.body.requestId}`).set('authorization', `Bearer ${s}`);
      expect(e.body.signals.server.ipNetwork).toMatchObject({ isTorExit: null, isBlocklisted: null, isProxy: null, isVpn: null });
      expect(r.body.verdicts.tor.result).toBe(false);
    } finally {
      await none.close();
    }
  });
});

describe('consistency and VPN evidence', () => {
  it('a device time zone far from the IP location: vpn suspected; with foreign languages too, LOW_RTT_COHERENCE', async () => {
    const v = deviceValues(++seed);
    const tokyo = { ...v, timezone: { name: 'Asia/Tokyo', offset: 540 } };
    const a = await identifyFrom('8.8.8.8', tokyo);
    expect(a.event.signals.server.consistency.timezoneVsIp.result).toBe('inconsistent');
    expect(a.event.signals.server.vpnDetection.verdict).toBe('detected'); // inconsistent zone on a datacenter network
    const home = await identifyFrom('73.158.64.15', tokyo); // a US residential ISP
    expect(home.event.signals.server.asn.isDatacenter).toBe(false);
    expect(home.event.signals.server.vpnDetection).toEqual({ verdict: 'suspected', confidence: 0.5 });
    expect(home.result.verdicts.vpn.result).toBe(false);
    const japanese = await identifyFrom('73.158.64.15', { ...tokyo, navigator: { ...tokyo.navigator, languages: ['ja-JP', 'ja'] } });
    expect(japanese.event.signals.server.geo.rttCoherence).toBe(0);
    expect(japanese.result.riskFactors).toContain('LOW_RTT_COHERENCE');
  });

  it('a matching time zone and language: consistent, high coherence', async () => {
    const v = deviceValues(++seed);
    const { result, event } = await identifyFrom('73.158.64.15', { ...v, timezone: { name: event0Tz(), offset: -480 } });
    expect(event.signals.server.geo.timezone).toBe(event0Tz());
    expect(event.signals.server.consistency.timezoneVsIp.result).toBe('consistent');
    expect(event.signals.server.geo.rttCoherence).toBe(1);
    expect(result.riskFactors).not.toContain('LOW_RTT_COHERENCE');
  });
});

/** The zone DB-IP places 73.158.64.15 in (read from the data, so the test follows it). */
let tz: string | undefined;
function event0Tz(): string {
  return tz!;
}
beforeAll(async () => {
  const { loadGeo } = await import('../../../server/edge/geo.js');
  tz = loadGeo().lookup({ address: '73.158.64.15', version: 4 }).timezone ?? undefined;
});

describe('HTTP client classification', () => {
  it('a curl-shaped request claiming Chrome: UA_TLS_MISMATCH and bot probability', async () => {
    const v = deviceValues(++seed);
    const res = await request(proxied.app)
      .post('/v1/identify')
      .set('x-api-key', proxiedLive)
      .set('x-forwarded-for', '73.158.64.15')
      .set('user-agent', 'curl/8.5.0')
      .send(identifyBody(v));
    const e = await request(proxied.app).get(`/v1/events/${res.body.requestId}`).set('authorization', `Bearer ${proxiedSecret}`);
    expect(e.body.signals.server.http.classification).toBe('curl');
    expect(e.body.signals.server.http.fingerprint).toMatch(/^hfp1:/);
    expect(res.body.riskFactors).toContain('UA_TLS_MISMATCH');
    expect(e.body.signals.server.consistency.userAgentVsTls.result).toBe('inconsistent');
    expect(res.body.botProbability).toBeCloseTo(1 - (1 - 0.6) * (1 - 0.3), 5);
  });
});
