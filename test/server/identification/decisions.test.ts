// The linker's decisions (server/identification/linker.ts) over the
// benchmark's in-memory index (bench/accuracy/memoryIndex.ts, the store's
// semantics): each case states what a device's visits must come to, so that
// removing one rule of link(), byToken(), heal() or what a visit leaves to
// index fails it. linker.test.ts runs the main paths on the real store.
import { describe, expect, it } from 'vitest';
import { MemoryIndex } from '../../../bench/accuracy/memoryIndex.js';
import { exactKey, extractComponents, partialKeys, type Components } from '../../../server/identification/components.js';
import {
  link,
  remembered,
  withVisit,
  YOUNG_VISITS,
  ASNS_CAP,
  PREFIXES_CAP,
  TOKENS_CAP,
  type Match,
  type Visit,
  type VisitorRecord,
} from '../../../server/identification/linker.js';
import { networkScore, type CandidateFacts, type VisitFacts, type VisitNetwork } from '../../../server/identification/evidence.js';
import { deviceValues } from '../../support/signals.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const T0 = Date.UTC(2026, 0, 15);

interface Send {
  token?: string | null;
  /** Through the first-party proxy: the device cookie's token hash. */
  cookie?: string;
  incognito?: boolean;
  advance?: number;
  asn?: number | null;
  kind?: VisitNetwork['kind'];
}

/** An account's index and a way to send it visits the way the benchmark and identify do (link, record, index). */
function account(index = new MemoryIndex()) {
  let t = T0;
  const visitOf = (components: Components, prefix: string | null, o: Send = {}): Visit => {
    t += o.advance ?? HOUR;
    return {
      components,
      tokenHash: o.token ?? null,
      // The device's cookie, presented as a browser that keeps it does (issued on its first visit: no matter here).
      ...(o.cookie ? { otherToken: o.cookie, cookie: o.cookie, cookiePresented: true } : {}),
      linkedId: null,
      network: { prefix, asn: o.asn === undefined ? 2856 : o.asn, kind: o.kind ?? 'fixed' },
      incognito: o.incognito ?? false,
      now: t,
    };
  };
  const send = async (components: Components, prefix: string | null, o: Send = {}): Promise<Match> => {
    const visit = visitOf(components, prefix, o);
    const match = await link(index, visit);
    const before = index.record(match, visit);
    // The visit's other token names the matched visitor too (service.ts tokensToPoint).
    const moreTokens = visit.otherToken && !match.tokenRejected ? [visit.otherToken] : [];
    await index.remember({ ...remembered(before, match, visit, match.kind === 'new'), moreTokens });
    return match;
  };
  return { index, send, visitOf, now: () => t };
}

let seed = 500;
const device = (): Components => extractComponents(deviceValues(++seed));
const HOME = '81.2.69.0/24';

/** A visitor of three visits from HOME on AS 2856, with token `a`. */
const record = (o: Partial<VisitorRecord> = {}): VisitorRecord => ({
  id: 'v',
  components: [],
  visitCount: 3,
  firstSeenAt: T0,
  lastSeenAt: T0,
  prefixes: [{ p: HOME, n: 3, last: T0 }],
  asns: [{ a: 2856, n: 3, last: T0 }],
  novelPrefixes: 1,
  novelAsns: 1,
  webkit: false,
  tokens: [{ hash: 'a', first: T0, last: T0 }],
  linked: [],
  mergedInto: null,
  highRecall: null,
  suspects: [],
  residual: null,
  ...o,
});
const AWAY = '203.0.113.0/24';

/** A device with a history at home (four days, its token), then a visit from a network it never used with its storage gone. */
async function split(a: ReturnType<typeof account>, d = device(), away = AWAY) {
  const first = await a.send(d, HOME, { token: 'home' });
  for (let i = 0; i < 3; i++) await a.send(d, HOME, { token: 'home', advance: DAY });
  const young = await a.send(d, away, { token: 'away', advance: DAY, asn: 64500 });
  expect(young.kind).toBe('new');
  return { d, first, young };
}

describe('the token path', () => {
  it('names the token’s visitor with certainty when it suspects no predecessor', async () => {
    const a = account();
    const d = device();
    const first = await a.send(d, HOME, { token: 'a' });
    expect(await a.send(d, AWAY, { token: 'a', asn: 64500 })).toEqual({ visitorId: first.visitorId, kind: 'token', p: 1, tokenRejected: false });
  });

  it('keeps a device that cleared its storage on its visitor with its new token: tokens that follow each other are one device’s', async () => {
    const a = account();
    const d = device();
    const first = await a.send(d, HOME, { token: 'old' });
    await a.send(d, HOME, { token: 'old' });
    expect(await a.send(d, HOME, { token: 'new', advance: DAY })).toMatchObject({ visitorId: first.visitorId, kind: 'exact' });
    expect(await a.send(d, HOME, { token: 'new' })).toEqual({ visitorId: first.visitorId, kind: 'token', p: 1, tokenRejected: false });
    expect(a.index.visitors.size).toBe(1);
  });

  it('follows a chain of merges to the survivor', async () => {
    const a = account();
    const d = device();
    const v1 = await a.send(d, HOME, { token: 't1' });
    const v2 = await a.send(d, AWAY, { token: 't2', asn: 64500 });
    const v3 = await a.send(d, '198.51.100.0/24', { token: 't3', asn: 64501 });
    expect(new Set([v1.visitorId, v2.visitorId, v3.visitorId]).size).toBe(3);
    // v3 was merged into v2 and v2 into v1, each an alias of the next.
    a.index.visitors.get(v3.visitorId)!.mergedInto = v2.visitorId;
    a.index.visitors.get(v2.visitorId)!.mergedInto = v1.visitorId;
    expect(await a.send(d, HOME, { token: 't3' })).toMatchObject({ visitorId: v1.visitorId, kind: 'token', p: 1 });
  });

  it('neither believes nor claims a token another device presents', async () => {
    const a = account();
    const owner = await a.send(device(), HOME, { token: 'mine' });
    const thief = await a.send(device(), AWAY, { token: 'mine', asn: 64500 });
    expect(thief).toMatchObject({ kind: 'new', tokenRejected: true });
    expect(await a.index.tokenOwner('mine')).toBe(owner.visitorId);
  });

  it('joins the visitor a concurrent first visit of the device created with the same token', async () => {
    const index = new MemoryIndex();
    const a = account(index);
    const d = device();
    // The other request claims the token between this one's lookup and its claim.
    const other = await index.createVisitor(d, [], null);
    const claim = index.claimToken.bind(index);
    index.claimToken = async (t, id) => (t === 'raced' ? claim(t, other) : claim(t, id));
    const m = await link(index, a.visitOf(d, HOME, { token: 'raced' }));
    expect(m).toMatchObject({ visitorId: other, kind: 'token' });
    expect([...index.visitors.keys()]).toEqual([other]);
  });

  it('gives a token still naming a visitor the account no longer has to the new visitor', async () => {
    const index = new MemoryIndex();
    const a = account(index);
    const gone = await a.send(device(), HOME, { token: 'orphan' });
    index.visitors.delete(gone.visitorId);
    const m = await a.send(device(), HOME, { token: 'orphan' });
    expect(m.kind).toBe('new');
    expect(m.visitorId).not.toBe(gone.visitorId);
    expect(await index.tokenOwner('orphan')).toBe(m.visitorId);
  });

  it('separates a look-alike whose token takes turns with the visitor’s own, and joins the visitor a concurrent visit moved it to', async () => {
    const index = new MemoryIndex();
    const a = account(index);
    const d = device();
    const va = await a.send(d, HOME, { token: 'a' });
    // B, identical and on the same network, arrives with a token of its own and is linked to A by fingerprint and network.
    expect((await a.send(d, HOME, { token: 'b' })).visitorId).toBe(va.visitorId);
    await a.send(d, HOME, { token: 'a' });
    // B's token again after A's: two devices. A concurrent visit of B moves the token first.
    const elsewhere = await index.createVisitor(d, [], null);
    const move = index.moveToken.bind(index);
    index.moveToken = async (t, from, to) => (t === 'b' ? move(t, from, elsewhere) : move(t, from, to));
    const m = await link(index, a.visitOf(d, HOME, { token: 'b' }));
    expect(m).toEqual({ visitorId: elsewhere, kind: 'token', separated: true, p: 0.5, tokenRejected: false });
    expect(index.visitors.size).toBe(2);
  });

  it('keeps the turns of several browsers’ two tokens each: the first look-alike merged is still told apart by its cookie', async () => {
    const a = account();
    const d = extractComponents(deviceValues(9_001));
    const va = await a.send(d, HOME, { token: 'a', cookie: 'a cookie' });
    // Four identical devices on the same network, each with its agent token and device cookie, linked to A by fingerprint.
    for (const k of ['b', 'c', 'd', 'e']) expect((await a.send(d, HOME, { token: k, cookie: `${k} cookie` })).visitorId).toBe(va.visitorId);
    await a.send(d, HOME, { token: 'a', cookie: 'a cookie' });
    // B's agent storage is gone; its cookie takes turns with A's tokens, which the visitor still remembers beside B's.
    const m = await a.send(d, HOME, { token: 'b cookie', cookie: 'b cookie' });
    expect(m).toMatchObject({ kind: 'new', separated: true });
    expect(m.visitorId).not.toBe(va.visitorId);
  });

  it('gives a separated look-alike a visitor of its own that suspects no one', async () => {
    const a = account();
    const d = device();
    const va = await a.send(d, HOME, { token: 'a' });
    expect((await a.send(d, HOME, { token: 'b' })).visitorId).toBe(va.visitorId);
    await a.send(d, HOME, { token: 'a' });
    const m = await a.send(d, HOME, { token: 'b' });
    expect(m).toMatchObject({ kind: 'new', separated: true, p: 0.5, tokenRejected: false });
    expect(m.visitorId).not.toBe(va.visitorId);
    expect(a.index.visitors.get(m.visitorId)).toMatchObject({ suspects: [], residual: null, visitCount: 1 });
  });
});

describe('private windows', () => {
  it('never separates a device from a private window used beside its normal one, whichever came first', async () => {
    const a = account();
    const d = device();
    const first = await a.send(d, HOME, { token: 'normal' });
    const ids = [first.visitorId];
    for (let i = 0; i < 2; i++) {
      ids.push((await a.send(d, HOME, { token: 'window', incognito: true })).visitorId);
      ids.push((await a.send(d, HOME, { token: 'normal' })).visitorId);
    }
    expect(new Set(ids)).toEqual(new Set([first.visitorId]));
    // First seen in a private window, then in the normal one beside it: the window's token is no older device's.
    const b = account();
    const e = device();
    const opened = await b.send(e, HOME, { token: 'window', incognito: true });
    const seen = [opened.visitorId];
    for (let i = 0; i < 2; i++) {
      seen.push((await b.send(e, HOME, { token: 'normal' })).visitorId);
      seen.push((await b.send(e, HOME, { token: 'window', incognito: true })).visitorId);
    }
    seen.push((await b.send(e, HOME, { token: 'normal' })).visitorId);
    expect(new Set(seen)).toEqual(new Set([opened.visitorId]));
  });
});

describe('fingerprint links', () => {
  it('links a drifted device without its token at home as a fuzzy match, an unchanged one as exact', async () => {
    const a = account();
    const d = device();
    const first = await a.send(d, HOME, { token: 'a' });
    await a.send(d, HOME, { token: 'a', advance: DAY });
    const exact = await a.send(d, HOME, { token: 'cleared', advance: DAY });
    expect(exact).toMatchObject({ visitorId: first.visitorId, kind: 'exact' });
    expect(exact.scored?.[0]?.features.exact).toBe(1);
    const updated = await a.send({ ...d, canvas: 'rerendered', uaVersion: '131' }, HOME, { advance: DAY });
    expect(updated).toMatchObject({ visitorId: first.visitorId, kind: 'fuzzy' });
    expect(updated.p).toBeGreaterThanOrEqual(0.85);
    expect(updated.scored?.[0]?.features).toMatchObject({ exact: 0, changedRender: 1, changedVersion: 1 });
  });

  it('scores a visitor once however many of its aliases the index still lists', async () => {
    const a = account();
    const { d, first, young } = await split(a);
    // Back home with its split's token: merged. The index lists both ids on the home prefix and under the key.
    expect((await a.send(d, HOME, { token: 'away', advance: DAY })).mergedFrom).toBe(young.visitorId);
    const m = await a.send(d, HOME, { token: 'cleared again', advance: DAY });
    expect(m.visitorId).toBe(first.visitorId);
    expect(m.scored?.map((s) => s.visitorId)).toEqual([first.visitorId]);
    expect(m.scored?.[0]?.features.crowd).toBe(0);
  });

  it('does not score a device of the same model that differs in most of what its user set up', async () => {
    const a = account();
    const d = device();
    await a.send(d, HOME, { token: 'a' });
    const sibling = { ...d, fonts: 'Menlo', timezone: 'Asia/Tokyo', screen: '800x600', languages: 'ja' };
    const m = await a.send(sibling, HOME, { token: 'b' });
    expect(m).toMatchObject({ kind: 'new', scored: [] });
  });

  it('is a fuzzy match when the chosen visitor’s own last fingerprint differs, whoever else holds the exact one', async () => {
    const a = account();
    const d = device();
    // A's browser rendered the canvas differently until today; an identical device elsewhere already shows today's.
    const va = await a.send({ ...d, canvas: 'before the update' }, HOME, { token: 'a' });
    for (let i = 0; i < 6; i++) await a.send({ ...d, canvas: 'before the update' }, HOME, { token: 'a', advance: DAY });
    const vb = await a.send(d, AWAY, { token: 'b', asn: 64500 });
    expect(vb.visitorId).not.toBe(va.visitorId);
    const m = await a.send(d, HOME, { token: 'cleared', advance: DAY });
    expect(m).toMatchObject({ visitorId: va.visitorId, kind: 'fuzzy' });
    // Scored best first by log-odds, not by similarity: the exact one elsewhere comes second.
    expect(m.scored?.map((x) => x.visitorId)).toEqual([va.visitorId, vb.visitorId]);
  });

  it('keeps matching every configuration a visitor has shown: docked and undocked', async () => {
    const a = account();
    const d = device();
    const docked = { ...d, screen: '3840x2160' };
    const first = await a.send(d, HOME, { token: 'a' });
    await a.send(docked, HOME, { token: 'a', advance: DAY });
    // Undocked again, storage cleared: the visitor's older set matches in full.
    const m = await a.send(d, HOME, { token: 'cleared', advance: DAY });
    expect(m.visitorId).toBe(first.visitorId);
    expect(m.scored?.[0]?.features.changedScreen).toBe(0);
  });

  it('keeps another browser of the same computer apart: it is not scored at all', async () => {
    const a = account();
    const d = device();
    const chrome = await a.send(d, HOME, { token: 'chrome' });
    // Firefox: the same screen, time zone, hardware and platform (the index finds it by them), another browser.
    const firefox = await a.send({ ...d, browser: 'Firefox|Windows', uaVersion: '133' }, HOME, { token: 'firefox' });
    expect(firefox).toMatchObject({ kind: 'new', scored: [] });
    expect(firefox.visitorId).not.toBe(chrome.visitorId);
  });

  it('is not confused by a visitor the index still lists after its data was deleted', async () => {
    const a = account();
    const d = device();
    const gone = await a.send(d, HOME, { token: 'a' });
    a.index.visitors.delete(gone.visitorId);
    const m = await a.send(d, HOME, { token: 'b' });
    expect(m).toMatchObject({ kind: 'new', scored: [] });
  });

  it('weighs storage only for a visitor that keeps a token: a device whose storage is blocked returns without one', async () => {
    const a = account();
    const d = device();
    const first = await a.send(d, HOME);
    await a.send(d, HOME, { advance: DAY });
    const again = await a.send(d, HOME, { advance: DAY });
    expect(again).toMatchObject({ visitorId: first.visitorId, kind: 'exact' });
    expect(again.scored?.[0]?.features.storage).toBe(0);
    // The same visitor presented with a token all of a sudden: that is a change of storage to weigh.
    const withToken = await a.send(d, HOME, { token: 'appeared', advance: 60_000 });
    expect(withToken.scored?.[0]?.features.storage).toBeLessThan(-1);
  });

  it('counts as look-alikes only the other candidates about as similar', async () => {
    const a = account();
    const d = device();
    const near = await a.send(d, HOME, { token: 'near' });
    const far = await a.send({ ...d, screen: '1280x720', audioLatency: '0.02' }, AWAY, { token: 'far', asn: 64500 });
    const m = await a.send(d, '198.51.100.0/24', { token: 'third', asn: 64501, advance: DAY });
    const crowd = Object.fromEntries(m.scored!.map((s) => [s.visitorId, s.features.crowd]));
    // The exact one has no rival as similar; the other has the exact one above it.
    expect(crowd).toEqual({ [near.visitorId]: 0, [far.visitorId]: Math.log(2) });
  });

  it('keeps as suspects only candidates likely enough to heal towards; the others take their share as the residual', async () => {
    const a = account();
    const d = device();
    const own = await a.send(d, HOME, { token: 'own' });
    // A minute later, another time zone, languages, screen and network, and a token of its own: hardly the same device.
    const m = await a.send({ ...d, timezone: 'Asia/Tokyo', languages: 'ja', screen: '1280x800' }, AWAY, { token: 'other', asn: 64500, advance: 60_000 });
    expect(m.kind).toBe('new');
    const [only] = m.scored!;
    expect(only!.visitorId).toBe(own.visitorId);
    expect(Math.exp(only!.logOdds) * m.p).toBeLessThan(0.003);
    expect(a.index.visitors.get(m.visitorId)).toMatchObject({ suspects: [] });
    expect(a.index.visitors.get(m.visitorId)!.residual).toBeCloseTo(only!.logOdds, 10);
  });

  it('treats two identical visitors as each other’s look-alikes and links neither', async () => {
    const a = account();
    const d = device();
    const one = await a.send(d, HOME, { token: 'one' });
    const two = await a.send(d, '198.51.100.0/24', { token: 'two', asn: 64501, advance: DAY });
    expect(two.visitorId).not.toBe(one.visitorId);
    const m = await a.send(d, AWAY, { token: 'three', asn: 64500, advance: DAY });
    expect(m.kind).toBe('new');
    expect(m.scored?.map((s) => s.features.crowd)).toEqual([Math.log(2), Math.log(2)]);
    expect(new Set(m.scored?.map((s) => s.visitorId))).toEqual(new Set([one.visitorId, two.visitorId]));
  });

  it('keeps at most eight suspects, and the look-alikes left out as one residual share', async () => {
    const a = account();
    const d = device();
    for (let i = 0; i < 11; i++) await a.send(d, `10.0.${i}.0/24`, { token: `twin${i}`, asn: 64600 + i, advance: DAY });
    const m = await a.send(d, AWAY, { token: 'eleventh', asn: 64500, advance: DAY });
    expect(m.kind).toBe('new');
    const scored = m.scored!;
    expect(scored.length).toBeGreaterThan(8);
    // Best first.
    expect(scored.map((x) => x.logOdds)).toEqual(scored.map((x) => x.logOdds).sort((x, y) => y - x));
    expect(new Set(scored.map((x) => x.logOdds)).size).toBeGreaterThan(1);
    const young = a.index.visitors.get(m.visitorId)!;
    expect(young.suspects.map((s) => s.id)).toEqual(scored.slice(0, 8).map((s) => s.visitorId));
    const rest = scored.slice(8).map((s) => s.logOdds);
    expect(young.residual).toBeCloseTo(Math.log(rest.reduce((t, x) => t + Math.exp(x), 0)), 10);
  });
});

describe('split healing', () => {
  it('merges a young visitor into its suspect when it comes back to the suspect’s home', async () => {
    const a = account();
    const { d, first, young } = await split(a);
    const back = await a.send(d, HOME, { token: 'away', advance: DAY });
    expect(back).toMatchObject({ visitorId: first.visitorId, kind: 'token', tokenRejected: false, mergedFrom: young.visitorId });
    expect(back.p).toBeGreaterThanOrEqual(0.9);
  });

  it('adds no evidence from a visit through an anonymizer or without an address', async () => {
    const a = account();
    const { d, young } = await split(a);
    const before = a.index.visitors.get(young.visitorId)!.suspects;
    const vpn = await a.send(d, HOME, { token: 'away', kind: 'anonymizer' });
    expect(vpn.visitorId).toBe(young.visitorId);
    expect(vpn.suspects?.map((s) => s.net)).toEqual(before.map((s) => s.net));
    const unknown = await a.send(d, null, { token: 'away', asn: null });
    expect(unknown.suspects?.map((s) => s.net)).toEqual(before.map((s) => s.net));
  });

  it('counts a visit on the young visitor’s own network against the suspect, and one back at the suspect’s home for it', async () => {
    const a = account();
    const { d, young } = await split(a);
    const stay = await a.send(d, AWAY, { token: 'away', asn: 64500 });
    expect(stay).toMatchObject({ visitorId: young.visitorId, kind: 'token', tokenRejected: false });
    const once = stay.suspects![0]!.net;
    expect(once).toBeLessThan(0);
    // Each such visit adds to it.
    const twice = await a.send(d, AWAY, { token: 'away', asn: 64500 });
    expect(twice.suspects![0]!.net).toBeLessThan(1.5 * once);
    // Back home once: the evidence for the suspect outweighs that and more.
    const back = await a.send(d, HOME, { token: 'away', asn: 2856 });
    expect(back.mergedFrom).toBe(young.visitorId);
  });

  it('weighs a visit’s network by the suspect’s and the young visitor’s histories as one device’s against the young one’s alone', async () => {
    const a = account();
    const d = device();
    const renumbered = '81.2.70.0/24';
    const next = '81.2.71.0/24';
    await a.send(d, HOME, { token: 'home' });
    for (let i = 0; i < 3; i++) await a.send(d, HOME, { token: 'home', advance: DAY });
    // Storage gone, on another prefix of its ISP; then on a third one.
    const young = await a.send(d, renumbered, { token: 'away', advance: DAY });
    expect(young.kind).toBe('new');
    const m = await a.send(d, next, { token: 'away' });
    expect(m.visitorId).toBe(young.visitorId);
    const facts: VisitFacts = {
      now: a.now(),
      network: { prefix: next, asn: 2856, kind: 'fixed' },
      incognito: false,
      hasToken: true,
      proxied: false,
      prefixCrowd: 0,
      asnCrowd: 2,
      account: { visitors: 2, since: T0, n1: 0, n2: 0, n3: 0 },
      group: { n1: 0, n2: 0, n3: 0 },
      holders: 0,
      linked: null,
    };
    const history = { firstSeenAt: T0, lastSeenAt: T0, webkit: false, tokens: [] };
    // As one device: 5 visits, home 4 times and the renumbered line once, all on the ISP, two prefixes and one AS new to it.
    const asOne: CandidateFacts & { tokens: never[] } = {
      ...history,
      visitCount: 5,
      prefixes: [
        { p: HOME, n: 4, last: T0 },
        { p: renumbered, n: 1, last: T0 },
      ],
      asns: [{ a: 2856, n: 5, last: T0 }],
      novelPrefixes: 2,
      novelAsns: 1,
    };
    const alone: CandidateFacts & { tokens: never[] } = {
      ...history,
      visitCount: 1,
      prefixes: [{ p: renumbered, n: 1, last: T0 }],
      asns: [{ a: 2856, n: 1, last: T0 }],
      novelPrefixes: 1,
      novelAsns: 1,
    };
    expect(m.suspects?.[0]?.net).toBeCloseTo(networkScore(asOne, facts, []) - networkScore(alone, facts, []), 10);
  });

  it('weighs the suspects of a young visitor found by its fingerprint, as on a visit by its token', async () => {
    const a = account();
    const { d, young } = await split(a);
    const stay = await a.send(d, AWAY, { token: 'away', asn: 64500 });
    // Its storage cleared once more, on its own network: linked to it by fingerprint, and its suspects weigh the visit.
    const linked = await a.send(d, AWAY, { token: 'cleared again', asn: 64500 });
    expect(linked).toMatchObject({ visitorId: young.visitorId, kind: 'exact' });
    expect(linked.suspects?.[0]?.net).toBeLessThan(stay.suspects![0]!.net);
    expect(a.index.visitors.get(young.visitorId)!.suspects).toEqual(linked.suspects);
  });

  it('collapses a chain of splits to the first id when the last is re-joined', async () => {
    const a = account();
    const { d, first, young } = await split(a);
    // Cleared again on yet another network: a second split, which suspects both earlier ids.
    const second = await a.send(d, '198.51.100.0/24', { token: 'again', advance: DAY, asn: 64501 });
    expect(second.kind).toBe('new');
    expect(new Set([first.visitorId, young.visitorId, second.visitorId]).size).toBe(3);
    // Home with the last token, day after day: the last split is re-joined, and so is the split before it.
    let back = await a.send(d, HOME, { token: 'again' });
    for (let day = 0; day < 3 && !back.mergedFrom; day++) back = await a.send(d, HOME, { token: 'again', advance: DAY });
    expect(back).toMatchObject({ visitorId: first.visitorId, mergedFrom: second.visitorId });
    for (const id of [young.visitorId, second.visitorId]) expect(a.index.visitors.get(id)!.mergedInto).toBe(first.visitorId);
    expect((await a.send(d, AWAY, { token: 'away', asn: 64500 })).visitorId).toBe(first.visitorId);
  });

  it('undoes a merge when the merged token and the survivor’s own take turns: two devices after all', async () => {
    const a = account();
    const { d, first, young } = await split(a);
    expect((await a.send(d, HOME, { token: 'away', advance: DAY })).mergedFrom).toBe(young.visitorId);
    expect((await a.send(d, HOME, { token: 'home' })).visitorId).toBe(first.visitorId);
    expect(await a.send(d, HOME, { token: 'away' })).toEqual({ visitorId: young.visitorId, kind: 'token', p: 0.5, tokenRejected: false, separated: true });
    expect(a.index.visitors.get(young.visitorId)!.mergedInto).toBeNull();
  });

  it('drops a suspect that shows any of its tokens since the young visitor appeared', async () => {
    const a = account();
    const d = device();
    // The first visitor has had two tokens (its storage was cleared once at home).
    const first = await a.send(d, HOME, { token: 'h1' });
    await a.send(d, HOME, { token: 'h1', advance: DAY });
    expect((await a.send(d, HOME, { token: 'h2', advance: DAY })).visitorId).toBe(first.visitorId);
    await a.send(d, HOME, { token: 'h2', advance: DAY });
    const young = await a.send(d, AWAY, { token: 'away', advance: DAY, asn: 64500 });
    expect(young.kind).toBe('new');
    expect((await a.send(d, HOME, { token: 'h2' })).visitorId).toBe(first.visitorId);
    expect(await a.send(d, HOME, { token: 'away' })).toEqual({ visitorId: young.visitorId, kind: 'token', p: 1, tokenRejected: false, suspects: [] });
  });

  it('drops a suspect whose data was deleted, and one seen with a token of its own since the young visitor appeared', async () => {
    const a = account();
    const { d, first, young } = await split(a);
    a.index.visitors.delete(first.visitorId);
    expect(await a.send(d, AWAY, { token: 'away', asn: 64500 })).toEqual({
      visitorId: young.visitorId,
      kind: 'token',
      p: 1,
      tokenRejected: false,
      suspects: [],
    });
    const b = account();
    const s = await split(b);
    expect((await b.send(s.d, HOME, { token: 'home' })).visitorId).toBe(s.first.visitorId);
    expect(await b.send(s.d, HOME, { token: 'away' })).toEqual({ visitorId: s.young.visitorId, kind: 'token', p: 1, tokenRejected: false, suspects: [] });
  });

  it('grows sure of a suspect that keeps silent while its split visits, unless it is a Safari whose token ITP deletes anyway and that kept no device cookie', async () => {
    // Through the first-party proxy (`proxied`) the device also has the server-set cookie, which ITP does not delete.
    const silent = async (d: Components, proxied = false) => {
      const a = account();
      const cookie = (c: string) => (proxied ? { cookie: c } : {});
      await a.send(d, HOME, { token: 'home', ...cookie('home cookie') });
      for (let i = 0; i < 6; i++) await a.send(d, HOME, { token: 'home', advance: DAY, ...cookie('home cookie') });
      // The next day, storage gone, on a network it never used; then ten days of visits through a VPN (no network evidence).
      const young = await a.send(d, AWAY, { token: 'away', advance: DAY, asn: 64500, ...cookie('away cookie') });
      let last = young;
      for (let i = 0; i < 10; i++)
        last = await a.send(d, '185.1.1.0/24', { token: 'away', advance: DAY, asn: 9009, kind: 'anonymizer', ...cookie('away cookie') });
      expect(last.visitorId).toBe(young.visitorId);
      return { young: young.p, last: last.p };
    };
    const d = device();
    const chrome = await silent(d);
    const safari = await silent({ ...d, browser: 'Safari|macOS', platform: 'MacIntel' });
    expect(safari.young).toBeCloseTo(chrome.young, 10);
    // A desktop that visited daily and fell silent the day its split appeared: its split is likely no device of its own.
    // It visited 7 times in 6 days (6 visits over 6 + 14 prior days: 0.3 a day). Another device would have shown its
    // token by the split's first visit a day later unless it lost it (2.1 %), and by now, 11 days on, unless it lost it
    // (3.1 %): the silence multiplies the odds by P(no token by 1 day) / P(no token by 11 days).
    const quiet = (days: number) => {
      const q = 0.02 + 0.001 * days;
      return q + (1 - q) * Math.exp(-0.3 * days);
    };
    const logOdds = Math.log((1 - chrome.young) / chrome.young);
    expect(chrome.last).toBeCloseTo(1 / (1 + Math.exp(logOdds + Math.log(quiet(1) / quiet(11)))), 10);
    expect(chrome.last).toBeLessThan(chrome.young - 0.3);
    // A Safari away more than a week would have lost its token whether or not it is this device: no evidence either way.
    expect(safari.last).toBeCloseTo(safari.young, 10);
    // Unless it kept the device cookie: another device would still show that, so its silence counts as a Chrome's does.
    const safariWithCookie = await silent({ ...d, browser: 'Safari|macOS', platform: 'MacIntel' }, true);
    expect(safariWithCookie.young).toBeCloseTo(chrome.young, 10);
    expect(safariWithCookie.last).toBeCloseTo(chrome.last, 10);
  });

  it('stops looking for its predecessor after twenty visits or sixty days', async () => {
    const a = account();
    const { d, young } = await split(a);
    const v = a.index.visitors.get(young.visitorId)!;
    expect(v.suspects.length).toBeGreaterThan(0);
    // Sixty days on, on its own network: still young. A minute later: no longer.
    const since = a.index.visitors.get(young.visitorId)!.firstSeenAt;
    const sixty = await a.send(d, AWAY, { token: 'away', asn: 64500, advance: since + 60 * DAY - a.now() });
    expect(sixty.suspects).toHaveLength(1);
    const late = await a.send(d, HOME, { token: 'away', advance: 60_000 });
    expect(late).toEqual({ visitorId: young.visitorId, kind: 'token', p: 1, tokenRejected: false, suspects: [] });
    const b = account();
    const s = await split(b);
    b.index.visitors.get(s.young.visitorId)!.visitCount = YOUNG_VISITS;
    expect(await b.send(s.d, HOME, { token: 'away' })).toMatchObject({ visitorId: s.young.visitorId, p: 1, suspects: [] });
  });
});

describe('what a visit changes in its visitor', () => {
  const at = (prefix: string | null, asn: number | null, o: Partial<Visit> = {}): Visit => ({
    components: {},
    tokenHash: null,
    linkedId: null,
    network: { prefix, asn, kind: 'fixed' },
    incognito: false,
    now: T0 + DAY,
    ...o,
  });

  it('counts a network it used again and one new to it, newest first', () => {
    expect(withVisit(record(), at(HOME, 2856), null)).toMatchObject({
      prefixes: [{ p: HOME, n: 4, last: T0 + DAY }],
      asns: [{ a: 2856, n: 4, last: T0 + DAY }],
      novelPrefixes: 1,
      novelAsns: 1,
    });
    expect(withVisit(record(), at(AWAY, 64500), null)).toMatchObject({
      prefixes: [
        { p: AWAY, n: 1, last: T0 + DAY },
        { p: HOME, n: 3, last: T0 },
      ],
      asns: [
        { a: 64500, n: 1, last: T0 + DAY },
        { a: 2856, n: 3, last: T0 },
      ],
      novelPrefixes: 2,
      novelAsns: 2,
    });
    // No address: nothing of the network changes.
    const v = record();
    expect(withVisit(v, at(null, null), null)).toMatchObject({ prefixes: v.prefixes, asns: v.asns, novelPrefixes: 1, novelAsns: 1 });
  });

  it('remembers the most recent networks and tokens only', () => {
    const many = record({
      prefixes: Array.from({ length: PREFIXES_CAP }, (_, i) => ({ p: `10.0.${i}.0/24`, n: 1, last: T0 })),
      asns: Array.from({ length: ASNS_CAP }, (_, i) => ({ a: i, n: 1, last: T0 })),
      tokens: Array.from({ length: TOKENS_CAP }, (_, i) => ({ hash: `t${i}`, first: T0, last: T0 })),
    });
    const after = withVisit(many, at(AWAY, 64500, { tokenHash: 'new' }), 'new');
    expect(after.prefixes).toHaveLength(PREFIXES_CAP);
    expect(after.prefixes[0]!.p).toBe(AWAY);
    expect(after.asns).toHaveLength(ASNS_CAP);
    expect(after.asns[0]!.a).toBe(64500);
    expect(after.tokens).toHaveLength(TOKENS_CAP);
    expect(after.tokens.map((t) => t.hash)).toEqual(['new', ...many.tokens.slice(0, TOKENS_CAP - 1).map((t) => t.hash)]);
  });

  it('keeps when a token was first seen, and marks one seen only in private windows as storage never kept', () => {
    const v = record();
    expect(withVisit(v, at(HOME, 2856), 'a').tokens).toEqual([{ hash: 'a', first: T0, last: T0 + DAY }]);
    const privateOnly = withVisit(v, at(HOME, 2856, { incognito: true }), 'p').tokens[0];
    expect(privateOnly).toEqual({ hash: 'p', first: T0 + DAY, last: T0 + DAY, ephemeral: true });
    const again = withVisit(record({ tokens: [privateOnly!] }), at(HOME, 2856, { incognito: true, now: T0 + 2 * DAY }), 'p').tokens[0];
    expect(again).toEqual({ hash: 'p', first: T0 + DAY, last: T0 + 2 * DAY, ephemeral: true });
    // Presented by a normal window, it is storage the device keeps; a private window later does not undo that.
    const kept = withVisit(record({ tokens: [privateOnly!] }), at(HOME, 2856), 'p').tokens[0];
    expect(kept).toEqual({ hash: 'p', first: T0 + DAY, last: T0 + DAY });
    expect(withVisit(v, at(HOME, 2856, { incognito: true }), 'a').tokens[0]).toEqual({ hash: 'a', first: T0, last: T0 + DAY });
    // No token: the tokens stay.
    expect(withVisit(v, at(HOME, 2856), null).tokens).toBe(v.tokens);
  });

  it('keeps the turns of the visit’s other token too, the device cookie marked, unless the visit’s token was not believed', () => {
    const v = record({
      tokens: [
        { hash: 'a', first: T0, last: T0 },
        { hash: 'c', first: T0, last: T0, cookie: true },
      ],
    });
    const cookie = 'c';
    // The agent's token went by, the cookie beside it: both taken at this visit.
    expect(withVisit(v, at(HOME, 2856, { tokenHash: 'a', otherToken: 'c', cookie, cookiePresented: true }), 'a').tokens).toEqual([
      { hash: 'c', first: T0, last: T0 + DAY, cookie: true },
      { hash: 'a', first: T0, last: T0 + DAY },
    ]);
    // The agent's storage gone: the cookie went by, and the agent's new token joins it.
    expect(withVisit(v, at(HOME, 2856, { tokenHash: 'c', otherToken: 'new', cookie, cookiePresented: true }), 'c').tokens).toEqual([
      { hash: 'new', first: T0 + DAY, last: T0 + DAY },
      { hash: 'c', first: T0, last: T0 + DAY, cookie: true },
      { hash: 'a', first: T0, last: T0 },
    ]);
    // A cookie issued on a visit without any token known: issued until a later visit presents it (a browser that keeps
    // no cookie never does, and its absence then says nothing of the device's storage).
    const issued = withVisit(record({ tokens: [] }), at(HOME, 2856, { otherToken: 'c2', cookie: 'c2' }), null).tokens;
    expect(issued).toEqual([{ hash: 'c2', first: T0 + DAY, last: T0 + DAY, cookie: true, issued: true }]);
    const kept = record({ tokens: issued });
    expect(withVisit(kept, at(HOME, 2856, { otherToken: 'c2', cookie: 'c2' }), null).tokens).toEqual([
      { hash: 'c2', first: T0 + DAY, last: T0 + DAY, cookie: true, issued: true },
    ]);
    expect(withVisit(kept, at(HOME, 2856, { tokenHash: 'c2', cookie: 'c2', cookiePresented: true }), 'c2').tokens).toEqual([
      { hash: 'c2', first: T0 + DAY, last: T0 + DAY, cookie: true },
    ]);
    // A later proxied visit without it (a new one issued): it was not returned.
    expect(withVisit(kept, at(HOME, 2856, { otherToken: 'c3', cookie: 'c3' }), null).tokens).toEqual([
      { hash: 'c3', first: T0 + DAY, last: T0 + DAY, cookie: true, issued: true },
      { hash: 'c2', first: T0 + DAY, last: T0 + DAY, cookie: true, issued: true, unreturned: true },
    ]);
    // Nor is it by a visit that did not come through the proxy (no cookie to present).
    expect(withVisit(kept, at(HOME, 2856, { tokenHash: 'a' }), 'a').tokens[1]).not.toHaveProperty('unreturned');
    // Once presented, a later visit that issues it again (never: a presented cookie is kept) leaves it kept.
    const presented = record({ tokens: [{ hash: 'c2', first: T0, last: T0, cookie: true }] });
    expect(withVisit(presented, at(HOME, 2856, { otherToken: 'c2', cookie: 'c2' }), null).tokens[0]).not.toHaveProperty('issued');
    // The visit's token was not believed (recordVisit passes null): neither token is the visitor's.
    expect(withVisit(v, at(HOME, 2856, { tokenHash: 'x', otherToken: 'c3', cookie: 'c3' }), null).tokens).toBe(v.tokens);
  });
});

describe('what a visit leaves to index', () => {
  const d = extractComponents(deviceValues(77));
  const v = (o: Partial<VisitorRecord> = {}) => record({ components: [d], ...o });
  const visit = (o: Partial<Visit> = {}): Visit => ({
    components: d,
    tokenHash: 'a',
    linkedId: null,
    network: { prefix: HOME, asn: 2856, kind: 'fixed' },
    incognito: false,
    now: T0 + DAY,
    ...o,
  });
  const match = (o: Partial<Match> = {}): Match => ({ visitorId: 'v', kind: 'token', p: 1, tokenRejected: false, ...o });

  it('nothing new for a returning device with its own token, same components and networks', () => {
    expect(remembered(v(), match(), visit(), false)).toMatchObject({
      tokenHash: null,
      exact: null,
      heldExact: true,
      partials: [],
      newPrefix: null,
      newAsn: null,
    });
  });

  it('the keys of a device whose components changed, and the token a merge brought', () => {
    const changed = { ...d, screen: '3840x2160' };
    expect(remembered(v(), match(), visit({ components: changed }), false)).toMatchObject({
      exact: exactKey(changed),
      heldExact: false,
      partials: partialKeys(changed),
      tokenHash: null,
    });
    // It held the changed set before (docked again): the key counts it already.
    expect(remembered(v({ components: [d, changed] }), match(), visit({ components: changed }), false).heldExact).toBe(true);
    // Merged on this visit: the young visitor's token is pointed at the survivor, and its keys indexed.
    const merged = remembered(v(), match({ mergedFrom: 'young' }), visit(), false);
    expect(merged).toMatchObject({ tokenHash: 'a', exact: exactKey(d), partials: partialKeys(d) });
  });

  it('a new token, and no token the visit was refused', () => {
    expect(remembered(v(), match({ kind: 'exact' }), visit({ tokenHash: 'fresh' }), false)).toMatchObject({ tokenHash: 'fresh', exact: exactKey(d) });
    expect(remembered(v(), match({ kind: 'new', tokenRejected: true }), visit({ tokenHash: 'stolen' }), true)).toMatchObject({ tokenHash: null });
    // Without a token, same components: settled.
    expect(remembered(v(), match({ kind: 'exact' }), visit({ tokenHash: null }), false)).toMatchObject({ tokenHash: null, exact: null, partials: [] });
  });

  it('every key of a visitor created on the visit, which held none', () => {
    const r = remembered(v(), match({ kind: 'new' }), visit(), true);
    expect(r).toMatchObject({ created: true, exact: exactKey(d), heldExact: false, partials: partialKeys(d) });
  });

  it('nothing new for a device with several networks and tokens presenting one it used', () => {
    const several = v({
      prefixes: [
        { p: AWAY, n: 1, last: T0 },
        { p: HOME, n: 3, last: T0 },
      ],
      asns: [
        { a: 64500, n: 1, last: T0 },
        { a: 2856, n: 3, last: T0 },
      ],
      tokens: [
        { hash: 'b', first: T0, last: T0 },
        { hash: 'a', first: T0, last: T0 },
      ],
    });
    expect(remembered(several, match(), visit(), false)).toMatchObject({ tokenHash: null, exact: null, newPrefix: null, newAsn: null });
  });

  it('a network it had not used', () => {
    expect(remembered(v(), match(), visit({ network: { prefix: AWAY, asn: 64500, kind: 'fixed' } }), false)).toMatchObject({ newPrefix: AWAY, newAsn: 64500 });
    expect(remembered(v(), match(), visit({ network: { prefix: null, asn: null, kind: 'fixed' } }), false)).toMatchObject({ newPrefix: null, newAsn: null });
  });
});
