// The linker's decisions (server/identification/linker.ts) on the real
// store, one rule per case: the token path and what it refuses, separation
// of look-alikes, fingerprint links, new visitors and their suspects, split
// healing and its undoing, and what a visit leaves to index.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { extractComponents } from '../../../server/identification/components.js';
import { LINK_P, link, remembered, YOUNG_VISITS, type Match, type Visit } from '../../../server/identification/linker.js';
import { afterVisit, countVisit, toRecord } from '../../../server/identification/record.js';
import { StoreIndex } from '../../../server/identification/storeIndex.js';
import { createHarness, type Harness } from '../../support/harness.js';
import { deviceValues } from '../../support/signals.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness(import.meta.filename);
});
afterAll(async () => {
  await h.close();
});

const HOUR = 3_600_000;

const visitSummary = (seq: number, timestamp: number) => ({
  seq,
  requestId: `req_${seq}`,
  id: `v_${seq}`,
  timestamp,
  country: '',
  city: '',
  region: '',
  asn: null,
  asnOrg: '',
  asnCategory: 'unknown',
  botProbability: 0,
  confidence: 1,
  riskFactors: [],
});
let accounts = 0;
let t = Date.UTC(2026, 0, 15);
let seed = 90_000;

/** A fresh account and a way to send it visits the way identify does (link, record, index). */
function account() {
  const acc = `acc_linker_${++accounts}`;
  return async (
    values: ReturnType<typeof deviceValues>,
    prefix: string,
    o: { token?: string | null; incognito?: boolean; advance?: number; asn?: number } = {},
  ): Promise<Match> => {
    t += o.advance ?? HOUR;
    const visit: Visit = {
      components: extractComponents(values),
      tokenHash: o.token === undefined ? (values.deviceToken.token ?? null) : o.token,
      linkedId: null,
      network: { prefix, asn: o.asn ?? 2856, kind: 'fixed' },
      incognito: o.incognito ?? false,
      now: t,
    };
    const index = new StoreIndex(h.store, acc, t);
    const match = await link(index, visit);
    const before = (await index.doc(match.visitorId))!;
    const counted = countVisit(before, { t, ip: '203.0.113.1', country: '' }, 86_400_000);
    expect(await index.write(before, afterVisit(before, match, visit, counted, visitSummary(counted.seq, t)))).toBe(true);
    await index.remember(remembered(toRecord(before), match, visit, match.kind === 'new'));
    return match;
  };
}

describe('the token path', () => {
  it("names the token's visitor, with certainty when it has no suspects", async () => {
    const send = account();
    const d = deviceValues(++seed);
    const first = await send(d, '81.2.69.0/24');
    expect(first.kind).toBe('new');
    const again = await send(d, '2.125.160.0/24');
    expect(again).toMatchObject({ visitorId: first.visitorId, kind: 'token', p: 1, tokenRejected: false });
  });

  it('does not believe a token presented by another device', async () => {
    const send = account();
    const a = deviceValues(++seed);
    const va = await send(a, '81.2.69.0/24');
    const b = { ...deviceValues(++seed), deviceToken: a.deviceToken };
    const stolen = await send(b, '81.2.70.0/24');
    expect(stolen.tokenRejected).toBe(true);
    expect(stolen.visitorId).not.toBe(va.visitorId);
    expect((await send(a, '81.2.69.0/24')).visitorId).toBe(va.visitorId);
  });

  it('moves a token that takes turns with an older one to a visitor of its own', async () => {
    const send = account();
    const a = deviceValues(++seed);
    const office = '81.2.71.0/24';
    const va = await send(a, office);
    const b = { ...a, deviceToken: { ...a.deviceToken, token: `other_${seed}` } };
    // A private window of the look-alike links it to A by fingerprint and network.
    const linked = await send(b, office, { incognito: true });
    expect(linked.visitorId).toBe(va.visitorId);
    expect((await send(a, office)).visitorId).toBe(va.visitorId);
    const separated = await send(b, office);
    expect(separated).toMatchObject({ kind: 'new', separated: true });
    expect(separated.visitorId).not.toBe(va.visitorId);
    expect((await send(b, office)).visitorId).toBe(separated.visitorId);
  });

  it("never separates on a private window's token, however often it takes turns", async () => {
    const send = account();
    const a = deviceValues(++seed);
    const office = '81.2.73.0/24';
    const va = await send(a, office);
    const window = { ...a, deviceToken: { ...a.deviceToken, token: `window_${seed}` } };
    for (let i = 0; i < 3; i++) {
      const inPrivate = await send(window, office, { incognito: true });
      expect(inPrivate.visitorId).toBe(va.visitorId);
      expect(inPrivate.separated).toBeUndefined();
      expect((await send(a, office)).visitorId).toBe(va.visitorId);
    }
  });
});

describe('fingerprint links', () => {
  it('links a device that lost its storage on its own network, with the posterior as p', async () => {
    const send = account();
    const d = deviceValues(++seed);
    const home = '81.2.72.0/24';
    const first = await send(d, home);
    await send(d, home);
    const fresh = await send(d, home, { token: `cleared_${seed}`, advance: 24 * HOUR });
    expect(fresh.kind).toBe('exact');
    expect(fresh.visitorId).toBe(first.visitorId);
    expect(fresh.p).toBeGreaterThanOrEqual(LINK_P);
    expect(fresh.scored?.[0]?.visitorId).toBe(first.visitorId);
  });

  it('links a device first seen in a private window when it returns in a normal one: the window took its storage along', async () => {
    const send = account();
    const d = deviceValues(++seed);
    const first = await send(d, '81.2.71.0/24', { token: `window_${seed}`, incognito: true });
    // An hour later, on a renumbered line of the same ISP: a new token is what a private window's device shows next.
    const normal = await send(d, '81.2.99.0/24');
    expect(normal.kind).toBe('exact');
    expect(normal.visitorId).toBe(first.visitorId);
    expect(normal.scored?.[0]?.features.storage).toBe(0);
  });

  it('keeps a look-alike that just visited with its own token elsewhere apart, and suspects it', async () => {
    const send = account();
    const d = deviceValues(++seed);
    const first = await send(d, '81.2.73.0/24');
    const twin = await send(d, '2.125.161.0/24', { token: `twin_${seed}`, advance: 60_000, asn: 5089 });
    expect(twin.kind).toBe('new');
    expect(twin.p).toBeGreaterThan(1 - LINK_P);
    const record = await h.store.visitors.get(twin.visitorId);
    expect(record?.suspects?.map((s) => s.id)).toEqual([first.visitorId]);
  });
});

describe('split healing', () => {
  async function split(send: ReturnType<typeof account>) {
    const d = deviceValues(++seed);
    const home = `81.2.${74 + (seed % 100)}.0/24`;
    const first = await send(d, home);
    for (let i = 0; i < 3; i++) await send(d, home, { advance: 24 * HOUR });
    const token = `split_${seed}`;
    const away = await send(d, '203.0.113.0/24', { token, advance: 24 * HOUR, asn: 64500 });
    expect(away.kind).toBe('new');
    return { d, home, first, token, away };
  }

  it("merges a young visitor into its suspect once it comes back to the suspect's home", async () => {
    const send = account();
    const { d, home, first, token, away } = await split(send);
    const back = await send(d, home, { token });
    expect(back).toMatchObject({ visitorId: first.visitorId, kind: 'token', mergedFrom: away.visitorId });
    expect((await h.store.visitors.get(away.visitorId))?.mergedInto).toBe(first.visitorId);
    expect(await h.store.identity.tokenOwner(`acc_linker_${accounts}`, token)).toBe(first.visitorId);
    expect((await send(d, '203.0.113.0/24', { token })).visitorId).toBe(first.visitorId);
  });

  it('does not merge into a suspect seen with a token of its own since', async () => {
    const send = account();
    const { d, home, first, token } = await split(send);
    expect((await send(d, home)).visitorId).toBe(first.visitorId);
    const back = await send(d, home, { token });
    expect(back.mergedFrom).toBeUndefined();
    expect(back.visitorId).not.toBe(first.visitorId);
  });

  it('still merges into a suspect whose only token since is a private window of the device', async () => {
    const send = account();
    const { d, home, first, token, away } = await split(send);
    // A private window at home: linked to the first visitor by fingerprint, with a token of its own.
    expect((await send(d, home, { token: `private_${seed}`, incognito: true })).visitorId).toBe(first.visitorId);
    expect((await send(d, home, { token })).mergedFrom).toBe(away.visitorId);
  });

  it("undoes a merge when the merged token and the survivor's own take turns", async () => {
    const send = account();
    const { d, home, first, token, away } = await split(send);
    expect((await send(d, home, { token })).mergedFrom).toBe(away.visitorId);
    // The survivor's own token comes back, then the merged one again: two devices after all.
    expect((await send(d, home)).visitorId).toBe(first.visitorId);
    const undone = await send(d, home, { token });
    expect(undone).toMatchObject({ visitorId: away.visitorId, separated: true });
    expect((await h.store.visitors.get(away.visitorId))?.mergedInto).toBeNull();
    expect((await send(d, home)).visitorId).toBe(first.visitorId);
  });

  it('stops looking for a predecessor once the visitor is no longer young', async () => {
    const send = account();
    const { d, token, away } = await split(send);
    let last: Match | undefined;
    for (let i = 0; i < YOUNG_VISITS; i++) last = await send(d, '203.0.113.0/24', { token, advance: HOUR });
    expect(last?.visitorId).toBe(away.visitorId);
    expect((await h.store.visitors.get(away.visitorId))?.suspects).toEqual([]);
  });
});

describe('what a visit leaves to index', () => {
  it('nothing for a returning device with its own token, same components and known networks', async () => {
    const send = account();
    const d = deviceValues(++seed);
    const first = await send(d, '81.2.90.0/24');
    const v = (await h.store.visitors.get(first.visitorId))!;
    const visit: Visit = {
      components: extractComponents(d),
      tokenHash: d.deviceToken.token,
      linkedId: null,
      network: { prefix: '81.2.90.0/24', asn: 2856, kind: 'fixed' },
      incognito: false,
      now: t,
    };
    const r = remembered(toRecord(v), { visitorId: first.visitorId, kind: 'token', p: 1, tokenRejected: false }, visit, false);
    expect(r).toMatchObject({ tokenHash: null, exact: null, partials: [], newPrefix: null, newAsn: null, created: false });
    const moved = remembered(
      toRecord(v),
      { visitorId: first.visitorId, kind: 'token', p: 1, tokenRejected: false },
      { ...visit, network: { prefix: '2.125.0.0/24', asn: 5089, kind: 'fixed' } },
      false,
    );
    expect(moved).toMatchObject({ newPrefix: '2.125.0.0/24', newAsn: 5089 });
  });
});

describe('the index under concurrent visits (one process)', () => {
  it('loses no list entry or count when first visits sharing keys are indexed at once', async () => {
    const send = account();
    const prefix = '81.2.91.0/24';
    // Six devices of one model (same platform, browser, GPU, hardware) on one network, all at once.
    const base = deviceValues(++seed);
    const devices = Array.from({ length: 6 }, (_, i) => ({
      ...deviceValues(++seed),
      navigator: base.navigator,
      userAgent: base.userAgent,
      webgl: base.webgl,
      webglExtensions: base.webglExtensions,
      deviceMemory: base.deviceMemory,
      deviceToken: { ...base.deviceToken, token: `concurrent_${seed}_${i}` },
    }));
    const matches = await Promise.all(devices.map((d) => send(d, prefix, { advance: 0 })));
    const ids = new Set(matches.map((m) => m.visitorId));
    expect(ids.size).toBe(devices.length);
    const acc = `acc_linker_${accounts}`;
    const fingerprints = h.store.db.collection<{ _id: string; n?: number; visitors?: number; visitorIds?: string[] }>('fingerprints');
    expect((await fingerprints.findOne({ _id: `${acc}:n:${prefix}` }))?.n).toBe(devices.length);
    expect((await fingerprints.findOne({ _id: `${acc}:stats` }))?.visitors).toBe(devices.length);
    const onPrefix = await fingerprints.find({ _id: { $gte: `${acc}:mp:`, $lt: `${acc}:mp;` } }).toArray();
    expect(onPrefix).toHaveLength(1);
    expect(new Set(onPrefix.flatMap((d) => d.visitorIds ?? []))).toEqual(ids);
  });
});
