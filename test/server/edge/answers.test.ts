// What the edge stage and the risk verdicts answer for a broad, fixed sample
// of client addresses, compared with answers recorded in
// test/fixtures/edge/answers.json: refactors of the edge data (where tables
// live, how they load) must not change a single answer. The sample: an
// address of every curated AS, boundaries of random ASN ranges, random
// public IPv4 and IPv6, IPv4-mapped and NAT64 forms, private and reserved
// space, listed addresses, and the odd spellings proxies write.
//
// A deliberate change of answers is recorded anew with
//   RECORD_EDGE_ANSWERS=1 npx vitest run test/server/edge/answers.test.ts
// and the diff of the fixture is the change to review.
import { createReadStream, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Signals } from '../../../server/identification/components.js';
import { loadEdge, type Edge } from '../../../server/edge/analyze.js';
import { assessRisk } from '../../../server/risk/engine.js';
import { deviceValues } from '../../support/signals.js';

const FIXTURE = join(import.meta.dirname, '../../fixtures/edge/answers.json');
const FIXTURES = join(import.meta.dirname, '../../fixtures/edge');
const RECORD = process.env.RECORD_EDGE_ANSWERS === '1';

const lists = mkdtempSync(join(tmpdir(), 'deviceid-answers-'));
writeFileSync(join(lists, 'tor-exits.txt'), readFileSync(join(FIXTURES, 'tor-bulk-exit-list.txt')));
writeFileSync(join(lists, 'blocklist-sample.netset'), readFileSync(join(FIXTURES, 'firehol-sample.netset')));
writeFileSync(join(lists, 'proxy-sample.txt'), readFileSync(join(FIXTURES, 'proxy-sample.txt')));
// A residential /24 and a hosting /24 in the VPN and datacenter lists, so that list verdicts meet every ASN category.
const VPN_LIST = ['89.187.160.0/24', '81.2.69.0/28', '2a01:4f8:c0c::/48'];
const DATACENTER_LIST = ['73.0.0.0/24', '104.16.0.0/24', '2607:fb90:1::/48'];
writeFileSync(join(lists, 'vpn-sample.txt'), VPN_LIST.join('\n') + '\n');
writeFileSync(join(lists, 'datacenter-sample.txt'), DATACENTER_LIST.join('\n') + '\n');

/** What is compared per address: the edge facts and everything risk derives from the network. */
function answerOf(edge: Awaited<ReturnType<Edge['analyze']>>) {
  const risk = assessRisk(SIGNALS, { ...edge, bot: { claim: null, signature: null } }, [], NOW);
  const { tls: _tls, http: _http, ...facts } = edge;
  return {
    ...facts,
    risk: {
      botProbability: risk.botProbability,
      vpn: risk.verdicts.vpn,
      vpnDetection: risk.server.vpnDetection.verdict,
      tor: risk.verdicts.tor.result,
      proxy: risk.verdicts.proxy.result,
      ipBlocklist: risk.verdicts.ipBlocklist.result,
      factors: risk.riskFactors,
    },
  };
}

/** [path, leaf] pairs in key order; arrays are leaves. The fixture keeps the paths once and the leaves per address. */
function flatten(value: unknown, path = ''): [string, unknown][] {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return [[path, value]];
  return Object.entries(value).flatMap(([k, v]) => flatten(v, path ? `${path}.${k}` : k));
}

const SIGNALS = deviceValues(1) as unknown as Signals;
const NOW = Date.UTC(2026, 10, 1);

function fakeRequest(forwarded: string): IncomingMessage {
  const headers = { 'x-forwarded-for': forwarded, 'user-agent': 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/130.0.0.0 Safari/537.36' };
  return {
    socket: { remoteAddress: '127.0.0.1' },
    headers,
    rawHeaders: Object.entries(headers).flat(),
    method: 'POST',
    httpVersion: '1.1',
  } as unknown as IncomingMessage;
}

// ---------------------------------------------------------------------------
// The sample, drawn once when recording (the addresses are kept in the fixture).

function rng(seed: number) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 2 ** 32;
  };
}

const v4 = (k: number) => `${k >>> 24}.${(k >>> 16) & 255}.${(k >>> 8) & 255}.${k & 255}`;
function v6(k: bigint): string {
  const groups: string[] = [];
  for (let shift = 112n; shift >= 0n; shift -= 16n) groups.push(((k >> shift) & 0xffffn).toString(16));
  return groups.join(':');
}

async function rows(file: string): Promise<[string, string, number][]> {
  const out: [string, string, number][] = [];
  for await (const line of createInterface({ input: createReadStream(file) })) {
    const [first, last, asn] = line.split(',');
    if (first && last && asn) out.push([first, last, Number(asn)]);
  }
  return out;
}

async function drawSample(): Promise<string[]> {
  const dir = dirname(createRequire(import.meta.url).resolve('@ip-location-db/asn/package.json'));
  const rows4 = await rows(join(dir, 'asn-ipv4-num.csv'));
  const rows6 = await rows(join(dir, 'asn-ipv6-num.csv'));
  const r = rng(22);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const sample = new Set<string>();

  // An address inside every AS the curated tables name (IPv4 where it has any, else IPv6).
  const { CURATED_NETWORKS, MOBILE_CARRIERS } = await import('../../../server/edge/curated.js');
  const curated = new Set<number>([...CURATED_NETWORKS.flatMap((g) => g.networks.map((n) => n.asn)), ...MOBILE_CARRIERS.map((c) => c.asn)]);
  for (const asn of [...curated].sort((a, b) => a - b)) {
    const row4 = rows4.find((x) => x[2] === asn);
    if (row4) sample.add(v4(Number(row4[0]) + Math.floor(r() * (Number(row4[1]) - Number(row4[0]) + 1))));
    else {
      const row6 = rows6.find((x) => x[2] === asn);
      if (row6) sample.add(v6(BigInt(row6[0]) + 1n));
    }
  }
  // Boundaries of random ranges, and the address just past each.
  for (let i = 0; i < 300; i++) {
    const [first, last] = pick(rows4);
    for (const k of [Number(first), Number(last), Number(last) + 1]) if (k <= 0xffffffff) sample.add(v4(k));
  }
  for (let i = 0; i < 150; i++) {
    const [first, last] = pick(rows6);
    const f = BigInt(first);
    const l = BigInt(last);
    for (const k of [f, l, f + (l - f) / 2n, l + 1n]) sample.add(v6(k));
  }
  // Random public-looking addresses: mostly routed IPv4, mostly unrouted IPv6.
  for (let i = 0; i < 600; i++) sample.add(v4(Math.floor(r() * 2 ** 32)));
  for (let i = 0; i < 100; i++) sample.add(v6((0x2000n << 112n) | (BigInt(Math.floor(r() * 2 ** 29)) << 96n) | BigInt(Math.floor(r() * 2 ** 32))));
  // The same clients spelled as proxies and dual-stack sockets write them.
  const someV4 = [...sample].filter((s) => !s.includes(':')).slice(0, 120);
  for (const a of someV4.slice(0, 80)) sample.add(`::ffff:${a}`);
  for (const a of someV4.slice(80, 100)) sample.add(`64:ff9b::${a}`);
  for (const a of someV4.slice(100, 110)) sample.add(`${a}:4711`);
  for (const a of [...sample].filter((s) => s.includes(':') && !s.includes('.')).slice(0, 20)) {
    sample.add(`[${a}]:443`);
    sample.add(a.toUpperCase());
  }
  // Private, reserved and special space, and text that is no address at all.
  for (const a of [
    '10.1.2.3',
    '100.64.0.1',
    '100.127.255.254',
    '127.0.0.1',
    '169.254.1.1',
    '172.16.5.4',
    '172.31.255.255',
    '172.32.0.1',
    '192.0.0.8',
    '192.0.2.1',
    '192.88.99.1',
    '192.168.1.1',
    '198.18.0.1',
    '198.51.100.7',
    '203.0.113.9',
    '224.0.0.1',
    '240.0.0.1',
    '255.255.255.255',
    '0.0.0.0',
    '::',
    '::1',
    'fc00::1',
    'fd12:3456::1',
    'fe80::1%eth0',
    'ff02::1',
    '2001:db8::1',
    '2001:2::1',
    '2001:10::1',
    '3fff::1',
    '64:ff9b::8.8.8.8',
    '64:ff9b:1::1',
    '2002:c000:204::1',
    '2001::1',
    '::ffff:10.0.0.1',
    '::ffff:192.168.0.1',
    '0x7f.1',
    '2130706433',
    '010.1.1.1',
    'not-an-ip',
    '',
    'unknown',
  ])
    sample.add(a);
  // Listed addresses, and neighbours just outside the lists.
  for (const file of ['tor-bulk-exit-list.txt', 'proxy-sample.txt', 'firehol-sample.netset']) {
    for (const line of readFileSync(join(FIXTURES, file), 'utf8').split('\n')) {
      const token = line.replace(/[#;].*$/, '').trim();
      if (token !== '') sample.add(token.replace(/\/\d+$/, ''));
    }
  }
  for (const cidr of [...VPN_LIST, ...DATACENTER_LIST]) {
    const base = cidr.replace(/\/\d+$/, '');
    sample.add(base.endsWith('::') ? `${base}1` : base.replace(/\.0$/, '.7'));
  }
  sample.add('89.187.161.1');
  sample.add('81.2.69.16');
  return [...sample];
}

// ---------------------------------------------------------------------------

describe('edge answers for a fixed sample of addresses', () => {
  let edge: Edge;
  beforeAll(async () => {
    const config = {
      listsDir: lists,
      trustProxy: { hops: 0, cidrs: ['127.0.0.1/32'] },
      tlsHeaders: { ja4: 'x-ja4', cipher: 'x-tls-cipher', version: 'x-tls-version' },
    };
    edge = await loadEdge(config, pino({ level: 'silent' }));
  }, 60_000);
  afterAll(() => {
    edge?.close();
    rmSync(lists, { recursive: true, force: true });
  });

  const answerFor = async (address: string) => flatten(answerOf(await edge.analyze(fakeRequest(address))));

  it.runIf(RECORD)('records the answers', { timeout: 120_000 }, async () => {
    const rows: string[] = [];
    let fields: string[] = [];
    for (const address of await drawSample()) {
      const answer = await answerFor(address);
      fields = answer.map(([path]) => path);
      rows.push(JSON.stringify([address, ...answer.map(([, value]) => value)]));
    }
    writeFileSync(FIXTURE, `{"fields":${JSON.stringify(fields)},"rows":[\n${rows.join(',\n')}\n]}\n`);
  });

  it.skipIf(RECORD)('answers today as recorded', { timeout: 60_000 }, async () => {
    expect(existsSync(FIXTURE)).toBe(true);
    const { fields, rows } = JSON.parse(readFileSync(FIXTURE, 'utf8')) as { fields: string[]; rows: [string, ...unknown[]][] };
    expect(rows.length).toBeGreaterThan(2500);
    const differ: { address: string; field: string; recorded: unknown; now: unknown }[] = [];
    for (const [address, ...recorded] of rows) {
      const now = await answerFor(address);
      expect(now.map(([path]) => path)).toEqual(fields);
      now.forEach(([field, value], i) => {
        if (JSON.stringify(value) !== JSON.stringify(recorded[i])) differ.push({ address, field, recorded: recorded[i], now: value });
      });
    }
    expect(differ.slice(0, 20)).toEqual([]);
  });

  it.skipIf(RECORD)('covers every kind of answer', () => {
    const { fields, rows } = JSON.parse(readFileSync(FIXTURE, 'utf8')) as { fields: string[]; rows: [string, ...unknown[]][] };
    const seen = (field: string) => new Set(rows.map((r) => r[1 + fields.indexOf(field)]));
    expect(seen('asn.category')).toEqual(
      new Set(['UNKNOWN', 'DATACENTER', 'CDN', 'VPN_COMMERCIAL', 'TOR_EXIT', 'MOBILE_CARRIER', 'RESIDENTIAL_ISP', 'EDUCATION', 'GOVERNMENT']),
    );
    expect(seen('network.kind')).toEqual(new Set(['fixed', 'mobile', 'anonymizer']));
    expect(seen('ipVersion')).toEqual(new Set([4, 6]));
    expect(seen('isPrivate')).toEqual(new Set([true, false]));
    for (const list of ['torExit', 'blocklisted', 'proxy', 'vpn', 'datacenter']) expect(seen(`lists.${list}`)).toEqual(new Set([true, false]));
    expect(seen('risk.vpnDetection')).toEqual(new Set(['detected', 'suspected', 'not_detected']));
  });
});
