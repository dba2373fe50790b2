// Events, their search entries and webhook outbox entries share the
// `events` collection (server/store/events.ts): account ids are acc_<ulid>,
// so the three `_id` families sort apart and each range scan (retention,
// search, outbox, deletion) reads only its own; a request id that is not
// `req_…` reads no entry. An older database's `eventIndex` collection is
// moved into `events` (server/store/migrations.ts): idempotently, by two
// processes at once, and by a real start-up (WORKERS=2, in the primary)
// after which search finds the moved events.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { requestIdBound } from '../../../server/retention.js';
import { outboxId } from '../../../server/store/eventIndex.js';
import { LEGACY_EVENT_INDEX, migrate, moveEventIndex } from '../../../server/store/migrations.js';
import { signUp, type Customer } from '../../support/dashboard.js';
import { createHarness, TEST_ENV, type Harness } from '../../support/harness.js';
import { deviceValues, identifyBody } from '../../support/signals.js';
import { freePort } from '../../support/httpServer.js';

const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;
const FAR_FUTURE = requestIdBound(2 ** 48 - 1);

let h: Harness;
let c: Customer;
let live: string;
let secret: string;
const ids: { requestId: string; visitorId: string }[] = [];

beforeAll(async () => {
  h = await createHarness(import.meta.filename, { PLANS: '{"free":{"rps":100000,"monthly":1000000}}' });
  c = await signUp(h);
  live = await c.key('live');
  secret = await c.key('secret');
  for (const [seed, linkedId] of [
    [1, 'order-1'],
    [2, undefined],
    [1, undefined],
  ] as const) {
    h.clock.advance(1_000);
    const res = await h
      .http()
      .post('/v1/identify')
      .set('x-api-key', live)
      .send(identifyBody(deviceValues(seed), linkedId ? { linkedId } : {}));
    expect(res.status).toBe(200);
    ids.push(res.body as { requestId: string; visitorId: string });
  }
});
afterAll(async () => {
  await h.close();
});

const events = () => h.store.db.collection<{ _id: string; [field: string]: unknown }>('events');
const allIds = async () => (await events().find({}).toArray()).map((d) => d._id).sort();
const search = (query: string, base?: string) =>
  base
    ? fetch(`${base}/v1/events?${query}`, { headers: { authorization: `Bearer ${secret}` } }).then(async (r) => ({
        status: r.status,
        body: (await r.json()) as { events: { requestId: string }[] },
      }))
    : h
        .http()
        .get(`/v1/events?${query}`)
        .set('authorization', `Bearer ${secret}`)
        .then((r) => ({ status: r.status, body: r.body as { events: { requestId: string }[] } }));
const found = async (query: string, base?: string) => {
  const res = await search(query, base);
  expect(res.status).toBe(200);
  return res.body.events.map((e) => e.requestId);
};

/** Moves every entry (everything not an event) back into an `eventIndex` collection, as an older version stored it. */
async function toOldLayout(): Promise<string[]> {
  const entries = await events()
    .find({ _id: { $not: { $gte: 'req_', $lt: 'req_~' } } } as never)
    .toArray();
  expect(entries.length).toBeGreaterThan(0);
  await h.store.db.collection(LEGACY_EVENT_INDEX).insertMany(entries as never[]);
  await events().deleteMany({ _id: { $in: entries.map((e) => e._id) } });
  expect(await found('')).toEqual([]);
  return entries.map((e) => e._id).sort();
}

const collections = async () => (await h.store.db.listCollections({}, { nameOnly: true }).toArray()).map((x) => x.name);

describe('the _id families of the events collection', () => {
  it('account ids are acc_<ulid>: entries sort before every requestId, outbox entries after', () => {
    expect(c.accountId).toMatch(/^acc_/);
    expect(c.accountId.slice(4)).toMatch(ULID);
    for (const { requestId } of ids) {
      expect(requestId).toMatch(/^req_/);
      expect(requestId.slice(4)).toMatch(ULID);
      expect(`${c.accountId}|~` < requestId).toBe(true);
      expect(requestId < 'req_~').toBe(true);
      expect('req_~' < outboxId(requestId)).toBe(true);
    }
  });

  it('each range reads only its own family', async () => {
    const [first] = ids;
    await events().insertOne({ _id: outboxId(first!.requestId), r: first!.requestId, a: c.accountId, p: c.projectId });
    try {
      const stored = await allIds();
      const requestIds = ids.map((i) => i.requestId).sort();
      expect(stored.filter((id) => id.startsWith('req_'))).toEqual(requestIds);
      expect(stored.filter((id) => !id.startsWith('req_') && !id.startsWith(`${c.accountId}|`))).toEqual([outboxId(first!.requestId)]);

      // Retention: events only.
      expect((await h.store.events.olderThan(FAR_FUTURE, 1_000)).map((e) => e._id).sort()).toEqual(requestIds);
      // The outbox: its entry only.
      expect((await h.store.eventIndex.outbox(FAR_FUTURE, 100)).map((e) => e._id)).toEqual([outboxId(first!.requestId)]);
      // Search: the account's entries of one kind.
      const all = await h.store.eventIndex.range(`${c.accountId}|a`, '', '~', 'desc', 100);
      expect(all.map((e) => e.r)).toEqual([...requestIds].reverse());
      expect(all.every((e) => e._id.startsWith(`${c.accountId}|a|`))).toBe(true);
      // Deletion: the visitor's entries.
      const visitor = await h.store.deletions.visitorEntries(c.accountId, first!.visitorId);
      expect(visitor.map((e) => e.r).sort()).toEqual(ids.filter((i) => i.visitorId === first!.visitorId).map((i) => i.requestId));
      expect(visitor.every((e) => e._id.startsWith(`${c.accountId}|v|${first!.visitorId}|`))).toBe(true);
    } finally {
      await h.store.eventIndex.deleteOutbox([first!.requestId]);
    }
  });

  it('reads and patches events only: an entry id is no event', async () => {
    const entryId = `${c.accountId}|a|${ids[0]!.requestId.slice(4)}`;
    expect(await h.store.events.get(entryId)).toBeNull();
    expect(await h.store.events.update(entryId, { suspect: true })).toBeNull();
    expect((await events().findOne({ _id: entryId }))?.f).toEqual(expect.objectContaining({ s: false }));
    expect(() => h.store.events.olderThan(`${c.accountId}|~`, 10)).toThrow(/not a requestId bound/);
  });

  it('identify stores the event and its entries; deleting the events deletes their entries too', async () => {
    expect(await found('')).toEqual(ids.map((i) => i.requestId).reverse());
    const before = await allIds();
    // Delete the last event (and only it) through the repository, as retention does.
    const last = ids[2]!;
    const doomed = await h.store.events.get(last.requestId);
    await h.store.events.delete([doomed!]);
    const after = await allIds();
    expect(after.every((id) => !id.endsWith(last.requestId.slice(4)))).toBe(true);
    expect(after).toEqual(before.filter((id) => !id.endsWith(last.requestId.slice(4))));
    expect(await found('')).toEqual([ids[1]!.requestId, ids[0]!.requestId]);
    // Put it back as identify stored it, for the tests below.
    await h.store.events.insert(doomed!);
    expect(await allIds()).toEqual(before);
  });

  it("stores an event's verdicts and IP location as JSON text and its signals deflated, and reads events stored in the older form", async () => {
    const { requestId } = ids[0]!;
    const read = async () => {
      const res = await h.http().get(`/v1/events/${requestId}`).set('authorization', `Bearer ${secret}`);
      expect(res.status).toBe(200);
      return res.body as { verdicts: { bot: { result: boolean } }; signals: { client: unknown } };
    };
    const served = await read();
    const raw = (await events().findOne({ _id: requestId }))!;
    expect([typeof raw.verdicts, typeof raw.ipLocation, raw.signals?.constructor.name, raw.signalsJson]).toEqual(['string', 'string', 'Binary', undefined]);
    expect(JSON.parse(raw.verdicts as string)).toEqual(served.verdicts);
    expect(served.signals.client).toEqual(expect.objectContaining({ userAgent: expect.any(Object) }));
    // As an older version stored it: objects, and the signals as JSON text. The API answers the same, and a patch keeps them.
    const doc = (await h.store.events.get(requestId))!;
    await events().updateOne(
      { _id: requestId },
      { $set: { verdicts: doc.verdicts, ipLocation: doc.ipLocation, signalsJson: doc.signalsJson }, $unset: { signals: '' } },
    );
    expect(typeof (await events().findOne({ _id: requestId }))!.verdicts).toBe('object');
    expect(await read()).toEqual(served);
    const patched = await h
      .http()
      .patch(`/v1/events/${requestId}`)
      .set('authorization', `Bearer ${secret}`)
      .send({ tag: { k: 1 } });
    expect(patched.status).toBe(200);
    expect((patched.body as { verdicts: unknown }).verdicts).toEqual(served.verdicts);
    expect(await found('bot=bad')).toEqual(served.verdicts.bot.result ? expect.arrayContaining([requestId]) : expect.not.arrayContaining([requestId]));
  });
});

describe('moving an old eventIndex collection into events', () => {
  it('moves every document and drops eventIndex, also when two processes do it at once and one already copied some', async () => {
    const before = await allIds();
    const moved = await toOldLayout();
    // An earlier run that stopped half way had copied some already.
    await events().insertMany((await h.store.db.collection(LEGACY_EVENT_INDEX).find({}).limit(5).toArray()) as never[]);

    const counts = await Promise.all([moveEventIndex(h.store.db, 3), moveEventIndex(h.store.db, 4)]);
    // Each document inserted by exactly one of them (duplicates ignored).
    expect(counts[0] + counts[1]).toBe(moved.length - 5);
    expect(await allIds()).toEqual(before);
    expect(await collections()).not.toContain(LEGACY_EVENT_INDEX);
    expect(await migrate(h.store)).toEqual({ eventIndex: 0, owners: 0 });

    expect(await found('')).toEqual(ids.map((i) => i.requestId).reverse());
    expect(await found('linkedId=order-1')).toEqual([ids[0]!.requestId]);
    expect(await found(`visitorId=${ids[1]!.visitorId}`)).toEqual([ids[1]!.requestId]);
  });

  it('happens at start-up, in the primary of a cluster (WORKERS=2), before the workers serve: search finds the moved events', async () => {
    const before = await allIds();
    await toOldLayout();
    const dir = mkdtempSync(join(tmpdir(), 'deviceid-migration-'));
    const port = await freePort();
    const { child, url, output } = await start({
      ...TEST_ENV,
      DATA_DIR: dir,
      LOG_LEVEL: 'info',
      LOG_FORMAT: 'json',
      WORKERS: '2',
      PORT: String(port),
      MONGODB_URI: inject('mongoUri'),
      MONGODB_DB: h.store.db.databaseName,
    });
    try {
      expect(await collections()).not.toContain(LEGACY_EVENT_INDEX);
      expect(await allIds()).toEqual(before);
      // Logged once (by the primary), with the count.
      expect(output().match(/moved the search and outbox entries of eventIndex into events/g)).toHaveLength(1);
      expect(await found('', url)).toEqual(ids.map((i) => i.requestId).reverse());
      expect(await found('linkedId=order-1', url)).toEqual([ids[0]!.requestId]);
      expect(await found(`visitorId=${ids[0]!.visitorId}`, url)).toEqual([ids[2]!.requestId, ids[0]!.requestId]);
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});

function start(env: Record<string, string>): Promise<{ child: ChildProcess; url: string; output: () => string }> {
  const { BASE_URL: _b, MODE: _m, DEV: _d, PROD: _p, SSR: _s, ...rest } = process.env;
  const child = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts'], { env: { ...rest, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no banner within 90 s: ${out} ${err}`)), 90_000);
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on (https?:\/\/[^\s"]+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ child, url: m[1]!.replace(/\)$/, ''), output: () => out });
      }
    });
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('exit', (code) => reject(new Error(`exited ${code}: ${err}`)));
  });
}
