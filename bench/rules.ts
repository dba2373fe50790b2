// Cost of decision rules per identification: 100 realistic rules (bot
// verdicts, score thresholds, countries and ASNs in lists, CIDR ranges,
// velocity, tag fields, URL paths, User-Agent patterns, combinations), all
// run on each of 10,000 varied events, nearly none matching so that every
// rule runs. Reports µs per event for decide (the view's activation
// included) and for building the view, and the ruleset's compile time.
// Targets: decide ≤ 50 µs p50, ≤ 200 µs p99.
//
//   npx tsx bench/rules.ts [--events 10000] [--rounds 3]
import { parseArgs } from 'node:util';
import { checkExpression, CompiledRuleset, type ListLookup } from '../server/decisions/engine.js';
import { decisionView, type DecisionView, type ViewInput } from '../server/decisions/view.js';
import type { EventDoc } from '../server/store/events.js';
import { BENCH_LISTS, benchRules } from './support/rules.js';

const { values: args } = parseArgs({ options: { events: { type: 'string', default: '10000' }, rounds: { type: 'string', default: '3' } } });
const EVENTS = Number(args.events);

let x = 11;
const next = () => (x = (Math.imul(x, 1664525) + 1013904223) >>> 0);
const pick = <T>(a: readonly T[]): T => a[next() % a.length]!;
const chance = (p: number) => next() / 2 ** 32 < p;

const UAS = [
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/123.0.0.0 Safari/537.36 Edg/123.0.2420.97',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4.1 Safari/605.1.15',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10.15; rv:125.0) Gecko/20100101 Firefox/125.0',
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/122.0.0.0 Safari/537.36',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (Linux; Android 14; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.6367.82 Mobile Safari/537.36',
  'Mozilla/5.0 (Linux; Android 13; Pixel 7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/123.0.6312.99 Mobile Safari/537.36',
  'Mozilla/5.0 (iPad; CPU OS 16_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/16.6 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:124.0) Gecko/20100101 Firefox/124.0',
  'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/124.0.0.0 Safari/537.36',
];
const COUNTRIES = ['US', 'DE', 'GB', 'FR', 'BR', 'IN', 'JP', 'NL', 'CA', 'ES', 'IT', 'PL', 'SE', 'AU', 'MX'];
const ASNS = [7922, 3320, 2856, 3215, 28573, 9498, 2516, 1136, 812, 3352, 16509, 15169, 14061, 24940];
const CATEGORIES = ['RESIDENTIAL_ISP', 'RESIDENTIAL_ISP', 'RESIDENTIAL_ISP', 'MOBILE_CARRIER', 'DATACENTER', 'UNKNOWN'] as const;
const PATHS = ['/', '/checkout', '/checkout/pay', '/login', '/signup', '/product/42', '/cart', '/account/settings', '/search'];
const FACTORS = ['VPN_DETECTED', 'INCOGNITO', 'DATACENTER_ASN', 'LOW_RTT_COHERENCE', 'DEVTOOLS', 'PRIVACY_BROWSER'];

function input(i: number): ViewInput {
  const v6 = chance(0.2);
  const ip = v6
    ? `2a02:810${next() % 10}:${(next() & 0xffff).toString(16)}::${(next() & 0xffff).toString(16)}`
    : `${next() % 223}.${next() & 255}.${next() & 255}.${next() & 255}`;
  const w = (n: number) => ({ '5m': next() % (n + 1), '1h': next() % (3 * n + 1), '24h': next() % (10 * n + 1) });
  const bad = chance(0.05);
  const event = {
    _id: `req_${i}`,
    visitorId: `vis_${next() % 5000}`,
    confidence: 0.5 + (next() % 50) / 100,
    botProbability: bad ? 0.8 : (next() % 40) / 100,
    suspectScore: next() % 60,
    riskFactors: FACTORS.filter(() => chance(0.15)),
    verdicts: {
      bot: bad
        ? { result: true, probability: 0.9, kind: 'bad', info: { category: 'browser_automation', provider: null, name: null, identity: 'unknown' } }
        : { result: false, probability: 0.1, kind: 'human' },
      vpn: { result: chance(0.1), confidence: 0.5 + (next() % 50) / 100 },
      tor: { result: false },
      proxy: { result: chance(0.02) },
      incognito: { result: chance(0.2) },
      tampering: { result: false, anomalyScore: next() % 40 },
      headless: { result: bad },
      virtualMachine: { result: chance(0.03) },
      devtools: { result: chance(0.05) },
      privacyBrowser: { result: chance(0.05), name: null },
      highActivity: { result: false },
      ipBlocklist: { result: false },
      velocity: { distinctIp: w(2), distinctCountry: w(1), events: w(5) },
    },
    ip,
    ipLocation: { country: pick(COUNTRIES), city: 'Somewhere', region: 'Region' },
    url: `https://shop.example${pick(PATHS)}?ref=${next() % 100}`,
    referrer: chance(0.5) ? 'https://www.google.com/' : '',
    tagJson: chance(0.7) ? JSON.stringify({ plan: pick(['free', 'pro', 'team']), cartTotal: next() % 500, orderId: `o${next()}` }) : null,
    linkedId: chance(0.6) ? `user-${next() % 100000}` : null,
    timestamp: 1_700_000_000_000 + i * 1000,
  } as unknown as EventDoc;
  return {
    event,
    client: { userAgent: { userAgent: pick(UAS), brands: [] } as never },
    server: {
      asn: { asn: pick(ASNS), org: 'Some Network', category: pick(CATEGORIES), isDatacenter: false },
      ipNetwork: { version: v6 ? 6 : 4, prefix: null, isPrivate: false, isTorExit: false, isBlocklisted: null, isProxy: null, isVpn: null },
    },
    visitCount: 1 + (next() % 40),
    firstSeenAt: 1_690_000_000_000,
    linkedIdVouched: chance(0.3),
  };
}

const lists = new Map(BENCH_LISTS.map((l) => [l.name, new Set(l.values)]));
const lookup: ListLookup = { has: (list, value) => lists.get(list)?.has(value) ?? false };

const ruleset = benchRules();
for (const r of ruleset) {
  const error = checkExpression(r.expression);
  if (error) throw new Error(`${r.id}: ${error.message} (${r.expression})`);
}
let started = performance.now();
const compiled = new CompiledRuleset(ruleset);
console.log(`compiled ${ruleset.length} rules in ${(performance.now() - started).toFixed(1)} ms`);

const inputs = Array.from({ length: EVENTS }, (_, i) => input(i));
const quantiles = (t: number[]) => {
  t.sort((a, b) => a - b);
  const q = (p: number) => (t[Math.min(t.length - 1, Math.floor(p * t.length))]! * 1000).toFixed(1);
  return `p50 ${q(0.5)} µs, p90 ${q(0.9)} µs, p99 ${q(0.99)} µs`;
};

let matched = 0;
let errored = 0;
for (let round = 0; round < Number(args.rounds); round++) {
  const viewTimes: number[] = [];
  const decideTimes: number[] = [];
  matched = errored = 0;
  for (const i of inputs) {
    started = performance.now();
    const v: DecisionView = decisionView(i);
    const built = performance.now();
    const d = compiled.decide(v, lookup);
    decideTimes.push(performance.now() - built);
    viewTimes.push(built - started);
    if (d.ruleId) matched++;
    errored += d.errored.length;
  }
  console.log(`round ${round + 1}: decide (100 rules) ${quantiles(decideTimes)}; view ${quantiles(viewTimes)}`);
}
console.log(`${matched} of ${EVENTS} events matched a live rule; ${errored} rule errors`);
