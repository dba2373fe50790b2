// The view decision rules see (server/decisions/view.ts): built from the
// stored event, the User-Agent, the edge's signals and the visitor's counts;
// every field of contract/ruleFields.ts present with its type, a missing
// value '' / 0 / false / {}, and every string and list within the bounds the
// engine's cost estimate counts on.
import { describe, expect, it } from 'vitest';
import { LIMITS } from '../../../contract/identify.js';
import { RULE_FIELDS } from '../../../contract/ruleFields.js';
import { decisionView, VIEW_LIST_MAX, VIEW_STRING_MAX, type DecisionView, type ViewInput } from '../../../server/decisions/view.js';
import type { EventDoc } from '../../../server/store/events.js';

const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.6367.60 Safari/537.36';
const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1';

function event(over: Partial<EventDoc> = {}): EventDoc {
  return {
    _id: 'req_01J0000000000000000000000',
    accountId: 'acc_1',
    projectId: 'prj_1',
    visitorId: 'vis_1',
    visitId: 'vst_1',
    visitSeq: 3,
    keyType: 'live',
    confidence: 0.93,
    botProbability: 0.12,
    suspectScore: 27,
    riskFactors: ['VPN_DETECTED', 'INCOGNITO'],
    verdicts: {
      bot: {
        result: true,
        probability: 0.99,
        kind: 'good',
        info: { category: 'search_crawler', provider: 'Google', name: 'Googlebot', identity: 'verified', confidence: 0.99, listDate: null },
      },
      vpn: { result: true, confidence: 0.8 },
      tor: { result: true },
      proxy: { result: true },
      incognito: { result: true },
      tampering: { result: true, anomalyScore: 65 },
      headless: { result: true },
      virtualMachine: { result: true },
      devtools: { result: true },
      privacyBrowser: { result: true, name: 'Brave' },
      highActivity: { result: true },
      ipBlocklist: { result: true },
      velocity: {
        distinctIp: { '5m': 1, '1h': 2, '24h': 3 },
        distinctCountry: { '5m': 4, '1h': 5, '24h': 6 },
        events: { '5m': 7, '1h': 8, '24h': 9 },
      },
    },
    ip: '203.0.113.9',
    ipLocation: { country: 'DE', city: 'Berlin', region: 'Land Berlin', latitude: 52.5, longitude: 13.4 },
    url: 'https://shop.example:8443/checkout/pay?x=1#top',
    referrer: 'https://search.example/?q=shoes',
    tagJson: '{"plan":"pro","cart":{"total":129.5,"items":["a","b"]}}',
    linkedId: 'user-42',
    suspect: false,
    signalsJson: '{}',
    clientTimestamp: 1_700_000_000_000,
    timestamp: 1_700_000_000_500,
    createdAt: new Date(1_700_000_000_500),
    ...over,
  };
}

const server: ViewInput['server'] = {
  asn: { asn: 3320, org: 'Deutsche Telekom AG', category: 'RESIDENTIAL_ISP', isDatacenter: false },
  ipNetwork: { version: 4, prefix: '203.0.113.0/24', isPrivate: false, isTorExit: false, isBlocklisted: null, isProxy: null, isVpn: null },
};

const view = (over: Partial<ViewInput> = {}) =>
  decisionView({
    event: event(),
    client: { userAgent: { userAgent: CHROME, brands: [] } as never },
    server,
    visitCount: 3,
    firstSeenAt: 1_600_000_000_000,
    linkedIdVouched: true,
    ...over,
  });

/** The view's value at a dotted path. */
const at = (v: DecisionView, path: string): unknown => path.split('.').reduce<unknown>((o, k) => (o as Record<string, unknown>)[k], v);

/** Every leaf path of a view (tag is one leaf: a map). */
function leaves(o: Record<string, unknown>, prefix = ''): string[] {
  return Object.entries(o).flatMap(([k, v]) =>
    typeof v === 'object' && v !== null && !Array.isArray(v) && prefix + k !== 'tag' ? leaves(v as Record<string, unknown>, `${prefix}${k}.`) : [prefix + k],
  );
}

const jsTypeOk: Record<string, (v: unknown) => boolean> = {
  string: (v) => typeof v === 'string',
  int: (v) => Number.isSafeInteger(v),
  double: (v) => typeof v === 'number' && Number.isFinite(v),
  bool: (v) => typeof v === 'boolean',
  'list(string)': (v) => Array.isArray(v) && v.every((s) => typeof s === 'string'),
  'map(string, dyn)': (v) => typeof v === 'object' && v !== null && !Array.isArray(v),
};

describe('decision view', () => {
  it('reads every field from the event, the signals and the counts', () => {
    expect(view()).toEqual({
      requestId: 'req_01J0000000000000000000000',
      visitorId: 'vis_1',
      visitCount: 3,
      firstSeenAt: 1_600_000_000_000,
      timestamp: 1_700_000_000_500,
      newVisitor: false,
      confidence: 0.93,
      botProbability: 0.12,
      suspectScore: 27,
      riskFactors: ['VPN_DETECTED', 'INCOGNITO'],
      verdicts: {
        bot: { result: true, probability: 0.99, kind: 'good', category: 'search_crawler', provider: 'Google', name: 'Googlebot', identity: 'verified' },
        vpn: { result: true, confidence: 0.8 },
        tor: { result: true },
        proxy: { result: true },
        incognito: { result: true },
        headless: { result: true },
        virtualMachine: { result: true },
        devtools: { result: true },
        highActivity: { result: true },
        ipBlocklist: { result: true },
        tampering: { result: true, anomalyScore: 65 },
        privacyBrowser: { result: true, name: 'Brave' },
      },
      velocity: { distinctIp: { m5: 1, h1: 2, h24: 3 }, distinctCountry: { m5: 4, h1: 5, h24: 6 }, events: { m5: 7, h1: 8, h24: 9 } },
      ip: '203.0.113.9',
      ipVersion: 4,
      ipLocation: { country: 'DE', city: 'Berlin', region: 'Land Berlin', asn: 3320, asnOrg: 'Deutsche Telekom AG', networkCategory: 'RESIDENTIAL_ISP' },
      linkedId: 'user-42',
      linkedIdVouched: true,
      tag: { plan: 'pro', cart: { total: 129.5, items: ['a', 'b'] } },
      browser: { name: 'Chrome', version: '124.0.6367.60', major: 124 },
      os: { name: 'Windows', version: '10' },
      device: { type: '', vendor: '', model: '' },
      userAgent: CHROME,
      url: 'https://shop.example:8443/checkout/pay?x=1#top',
      urlPath: '/checkout/pay',
      origin: 'https://shop.example:8443',
      referrer: 'https://search.example/?q=shoes',
    });
  });

  it('has exactly the fields contract/ruleFields.ts documents, each of its type', () => {
    const v = view();
    expect(leaves(v as never).sort()).toEqual(RULE_FIELDS.map((f) => f.path).sort());
    for (const f of RULE_FIELDS) expect(jsTypeOk[f.type]!(at(v, f.path)), f.path).toBe(true);
  });

  it('fills every missing value with an empty one of its type', () => {
    const bare = {
      ...event(),
      verdicts: {},
      ipLocation: {},
      riskFactors: undefined,
      tagJson: null,
      linkedId: null,
      url: '',
      referrer: undefined,
    } as unknown as EventDoc;
    const v = decisionView({ event: bare, client: {}, server: null, visitCount: Number.NaN, firstSeenAt: 0, linkedIdVouched: false });
    const empty: Record<string, unknown> = { string: '', int: 0, double: 0, bool: false, 'list(string)': [], 'map(string, dyn)': {} };
    const kept = new Set(['requestId', 'visitorId', 'timestamp', 'confidence', 'botProbability', 'suspectScore', 'ip', 'ipVersion']);
    for (const f of RULE_FIELDS) {
      expect(jsTypeOk[f.type]!(at(v, f.path)), f.path).toBe(true);
      if (!kept.has(f.path)) expect(at(v, f.path), f.path).toEqual(empty[f.type]);
    }
    expect(v.ipVersion).toBe(4);
  });

  it('counts a first visit as new', () => {
    expect(view({ visitCount: 1 }).newVisitor).toBe(true);
    expect(view({ visitCount: 2 }).newVisitor).toBe(false);
  });

  it('names a device from its User-Agent, and nothing from none or an unknown one', () => {
    const phone = view({ client: { userAgent: { userAgent: IPHONE, brands: [] } as never } });
    expect([phone.browser, phone.os, phone.device]).toEqual([
      { name: 'Mobile Safari', version: '17.4', major: 17 },
      { name: 'iOS', version: '17.4' },
      { type: 'mobile', vendor: 'Apple', model: 'iPhone' },
    ]);
    for (const client of [{}, { userAgent: { userAgent: 'curl/8.4.0', brands: [] } as never }]) {
      const v = view({ client });
      expect([v.browser, v.os, v.device]).toEqual([
        { name: '', version: '', major: 0 },
        { name: '', version: '' },
        { type: '', vendor: '', model: '' },
      ]);
    }
  });

  it('hands out its own copy of a cached User-Agent parse', () => {
    const first = view();
    first.browser.name = 'changed';
    expect(view().browser.name).toBe('Chrome');
  });

  it('takes the IP version from the edge, else from the address', () => {
    expect(view({ server: { ...server, ipNetwork: { ...server.ipNetwork, version: 6 } } }).ipVersion).toBe(6);
    expect(view({ server: null, event: event({ ip: '2001:db8::1' }) }).ipVersion).toBe(6);
    expect(view({ server: null, event: event({ ip: '198.51.100.7' }) }).ipVersion).toBe(4);
    expect(view({ server: null, event: event({ ip: '' }) }).ipVersion).toBe(0);
  });

  it('has no network category for an unknown network', () => {
    expect(view({ server: { ...server, asn: { asn: null, org: '', category: 'UNKNOWN', isDatacenter: false } } }).ipLocation).toMatchObject({
      asn: 0,
      asnOrg: '',
      networkCategory: '',
    });
  });

  it("splits the page URL into path and origin, '' when it has none", () => {
    expect(view({ event: event({ url: 'not a url' }) })).toMatchObject({ url: 'not a url', urlPath: '', origin: '' });
    expect(view({ event: event({ url: 'about:blank' }) })).toMatchObject({ urlPath: 'blank', origin: '' });
    expect(view({ event: event({ url: 'http://a.example' }) })).toMatchObject({ urlPath: '/', origin: 'http://a.example' });
  });

  it('takes only a JSON object within the tag limit as the tag', () => {
    expect(view({ event: event({ tagJson: '{"__proto__":{"x":1}}' }) }).tag).toEqual(JSON.parse('{"__proto__":{"x":1}}'));
    expect(Object.keys(view({ event: event({ tagJson: '{"__proto__":{"x":1}}' }) }).tag)).toEqual(['__proto__']);
    for (const tagJson of ['[1,2]', '"text"', 'null', '{oops', `{"s":"${'x'.repeat(LIMITS.tagBytes)}"}`])
      expect(view({ event: event({ tagJson }) }).tag).toEqual({});
  });

  it('cuts strings and risk factors to the bounds the engine counts on', () => {
    // The path percent-encodes each 'ü' into six characters.
    const long = `https://a.example/${'ü'.repeat(3 * VIEW_STRING_MAX)}`;
    const v = view({ event: event({ url: long, referrer: long, riskFactors: Array.from({ length: 100 }, (_, i) => `F${i}`) }) });
    expect([v.url.length, v.referrer.length, v.urlPath.length]).toEqual([VIEW_STRING_MAX, VIEW_STRING_MAX, VIEW_STRING_MAX]);
    expect(v.riskFactors).toHaveLength(VIEW_LIST_MAX);
  });

  it('makes ints of whole numbers only: a fraction is cut, anything else is 0', () => {
    expect(view({ visitCount: 2.7 }).visitCount).toBe(2);
    expect(view({ firstSeenAt: Number.POSITIVE_INFINITY }).firstSeenAt).toBe(0);
    expect(view({ event: event({ suspectScore: '7' as never }) }).suspectScore).toBe(0);
    expect(view({ event: event({ confidence: Number.NaN }) }).confidence).toBe(0);
  });
});
