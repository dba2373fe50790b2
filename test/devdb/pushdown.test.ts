// The dev database's FerretDB carries a patch (devdb/ferretdb-pushdown.patch)
// that narrows `{_id: x, ...}`, `{_id: {$in: [...]}, ...}` and `_id` string
// ranges (`{_id: {$gt/$gte/$lt/$lte: 'string'}, ...}`) in SQL instead of
// scanning the collection, and, when a range is the whole filter, also pushes
// down `sort({_id: ±1})` and the limit. The Go filter stays authoritative, so
// whatever the patch selects, results must be exactly what the filters mean:
// checked here on about 22,000 documents with `_id`s of several types against
// the same filters evaluated in JavaScript, for reads and for the writes that
// share the query path. Strings compare by their UTF-8 bytes (MongoDB's simple
// binary comparison), which JavaScript's `<` (UTF-16 code units) does not. On
// FerretDB, explain also shows which filters were pushed down to an index.
// (Against real MongoDB the same checks run, without the explain ones.)
import { Long, MongoClient, ObjectId, type Collection, type Document, type Filter } from 'mongodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { testDbName } from '../support/harness.js';

type Id = string | number | boolean | Date | ObjectId | { a: string };
interface Doc {
  _id: Id;
  n: number;
  group: number;
  cas?: number;
  tag?: string;
  sub?: { k: number };
}

const N = 20_000;
const strId = (i: number) => `d${String(i).padStart(5, '0')}`;
const oids = Array.from({ length: 5 }, (_, i) => new ObjectId(`65a0000000000000000000${String(i).padStart(2, '0')}`));
const [oid0, oid1, oid2, , oid4] = oids as [ObjectId, ObjectId, ObjectId, ObjectId, ObjectId];
// strings whose JSON encoding escapes or keeps unusual characters
const tricky = ['a<b>&c', 'é', 'emoji😀', 'q"uote', 'back\\slash', 'line\u2028sep', 'ctl\u0001', ''];
// `_id`s the service's ranges read (search entries `acc|v|visitor|ulid`,
// events `req_ulid`, outbox entries `~o|req_ulid`), strings around their
// bounds and beyond ASCII (where UTF-8 byte order and JavaScript's UTF-16
// order differ: '\uffff' < '😀' in UTF-16, not in UTF-8), a string that looks
// like an ObjectId's hex, and `_id`s of other types whose JSON text falls in
// string ranges (an ObjectId's hex, a number's or a date's digits, an
// object's `{`).
const ulidish = (j: number) => `01K${String(j * 37).padStart(6, '0')}`;
const family = Array.from({ length: 1_000 }, (_, i) => `acc_${i % 4}|v|iq_${Math.floor(i / 4) % 10}|${ulidish(Math.floor(i / 40))}`);
const events = [...Array.from({ length: 300 }, (_, j) => `req_${ulidish(j)}`), ...Array.from({ length: 200 }, (_, j) => `~o|req_${ulidish(j)}`)];
const edges = [
  '|',
  '~',
  '||',
  '|~',
  '~|',
  '~~',
  'acc_1|',
  'acc_1|~',
  'acc_1~',
  'acc_1|v|iq_3|',
  'Z',
  'z',
  '0',
  '7',
  '9~',
  '\u007f',
  '\u0080',
  'ÿ',
  'Ω',
  '中文',
  '\ue000',
  '\ufffd',
  '\uffff',
  '\uffffz',
  '😀',
  '😀x',
  '𝄞',
  'a😀',
  'a\uffff',
];
// (FerretDB's unique `_id` index on the JSON value rejects a string equal to a
// stored ObjectId's hex, so this one is not.)
const hexString = '65a000000000000000000099';
const others: Id[] = [true, new Date(1_700_000_000_000), { a: 'x' }, 12_345, -1];

let client: MongoClient;
let col: Collection<Doc>;
/** What the collection holds, kept in step with every write below. */
let docs: Doc[];
let ferret: boolean;

const key = (id: Id) => (id instanceof ObjectId ? `o:${id.toHexString()}` : `${typeof id}:${String(id)}`);
const canon = (d: Document) => JSON.stringify(d, Object.keys(d).sort());
const sorted = (ds: Document[]) => ds.map(canon).sort();
const idEq = (a: Id, b: Id) => key(a) === key(b);
const expected = (pred: (d: Doc) => boolean) => docs.filter(pred);
const inIds = (ids: Id[]) => (d: Doc) => ids.some((id) => idEq(id, d._id));

async function explain(filter: Filter<Doc>): Promise<{ pushdown: boolean; plan: string }> {
  const e = await col.find(filter).explain('queryPlanner');
  return { pushdown: e.filterPushdown as boolean, plan: JSON.stringify(e.queryPlanner) };
}
// SQLite: `SEARCH ... USING INDEX`; PostgreSQL: an (bitmap) index scan
const INDEXED = /USING INDEX|Index Scan/;

beforeAll(async () => {
  client = await MongoClient.connect(inject('mongoUri'));
  const db = client.db(testDbName(import.meta.filename));
  col = db.collection<Doc>('docs');
  docs = [
    ...Array.from({ length: N }, (_, i) => ({ _id: strId(i), n: i % 7, group: i % 3 })),
    ...oids.map((_id, i) => ({ _id, n: i, group: 0 })),
    ...tricky.map((_id, i) => ({ _id, n: i, group: 1 })),
    { _id: 7, n: 0, group: 2 },
    { _id: 8.5, n: 1, group: 2 },
    ...[...family, ...events, ...edges, hexString].map((_id, i) => ({ _id, n: i % 7, group: i % 3, sub: { k: i % 3 } })),
    ...others.map((_id, i) => ({ _id, n: i, group: 2 })),
  ];
  for (let i = 0; i < docs.length; i += 5_000) await col.insertMany(docs.slice(i, i + 5_000).map((d) => ({ ...d })));
  const build = await db.admin().command({ buildInfo: 1 });
  ferret = 'ferretdbVersion' in build;
  if (ferret) {
    // the launcher indexes a new SQLite collection's `_id` expressions within 200 ms
    for (let t = 0; t < 50; t++) {
      if (INDEXED.test((await explain({ _id: strId(1) })).plan) && INDEXED.test((await explain({ _id: { $gt: 'acc_1|', $lt: 'acc_1|~' } })).plan)) break;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}, 120_000);
afterAll(async () => {
  await col?.db.dropDatabase();
  await client?.close();
});

describe('devdb _id pushdown: reads', () => {
  const cases: [string, Filter<Doc>, (d: Doc) => boolean, boolean][] = [
    ['_id equality', { _id: strId(42) }, (d) => d._id === strId(42), true],
    ['_id equality, a missing id', { _id: 'nope' }, () => false, true],
    ['_id equality and a key that holds', { _id: strId(42), n: 42 % 7 }, (d) => d._id === strId(42), true],
    ['_id equality and a key that excludes it', { _id: strId(42), n: (42 % 7) + 1 }, () => false, true],
    ['ObjectId equality and another key', { _id: oid2, group: 0 }, (d) => idEq(d._id, oid2), true],
    [
      '_id equality with an operator on another key',
      { _id: strId(99), n: { $gte: 0 }, $or: [{ group: 0 }, { group: 1 }] },
      (d) => d._id === strId(99) && [0, 1].includes(d.group),
      true,
    ],
    [
      '$in with duplicates and missing ids',
      { _id: { $in: [strId(5), strId(5), 'missing', strId(19_999), strId(0), 'd20000', strId(5)] } },
      inIds([strId(5), strId(19_999), strId(0)]),
      true,
    ],
    [
      '$in of 20 ids and a key that excludes some',
      { _id: { $in: Array.from({ length: 20 }, (_, i) => strId(i * 997)) }, n: 3 },
      (d) => inIds(Array.from({ length: 20 }, (_, i) => strId(i * 997)))(d) && d.n === 3,
      true,
    ],
    [
      '$in and $or beside it',
      { _id: { $in: [strId(1), strId(2), strId(3), strId(4)] }, $or: [{ n: 1 }, { group: 0 }] },
      (d) => inIds([strId(1), strId(2), strId(3), strId(4)])(d) && (d.n === 1 || d.group === 0),
      true,
    ],
    ['$in of ObjectIds and strings', { _id: { $in: [oid0, strId(10), oid4, new ObjectId()] } }, inIds([oid0, strId(10), oid4]), true],
    ['$in of strings with unusual characters', { _id: { $in: tricky } }, (d) => tricky.includes(d._id as string), true],
    ['each unusual string by equality', { $or: tricky.map((_id) => ({ _id })) }, (d) => tricky.includes(d._id as string), false],
    ['an empty $in', { _id: { $in: [] } }, () => false, true],
    ['$in with a number (no pushdown)', { _id: { $in: [strId(1), 7, 'missing'] } }, (d) => d._id === strId(1) || d._id === 7, false],
    ['$in with a regex (no pushdown)', { _id: { $in: [/^d0000[12]$/, strId(3)] } }, (d) => /^d0000[123]$/.test(String(d._id)), false],
    [
      '$in of 1,001 ids (too many to push down)',
      { _id: { $in: Array.from({ length: 1_001 }, (_, i) => strId(i * 3)) } },
      (d) => typeof d._id === 'string' && /^d\d{5}$/.test(d._id) && Number(d._id.slice(1)) % 3 === 0 && Number(d._id.slice(1)) <= 3_000,
      false,
    ],
    ['$in beside other operators on _id (no pushdown)', { _id: { $in: [strId(1), strId(2)], $ne: strId(2) } }, (d) => d._id === strId(1), false],
    ['a number _id', { _id: 7 }, (d) => d._id === 7, false],
  ];

  for (const [name, filter, pred, pushdown] of cases) {
    it(`find: ${name}`, async () => {
      const want = expected(pred);
      expect(sorted(await col.find(filter).toArray())).toEqual(sorted(want));
      expect(await col.countDocuments(filter)).toBe(want.length);
      if (ferret) {
        const e = await explain(filter);
        // PostgreSQL also pushes down equality on other keys and types (with
        // `@>`, unindexed), so "not pushed down" is SQLite's answer only
        if (pushdown || /detail=/.test(e.plan)) expect(e.pushdown).toBe(pushdown);
        if (pushdown && want.length) expect(e.plan).toMatch(INDEXED);
      }
    });
  }
});

// `_id` ranges: strings compare by UTF-8 bytes, and only strings are in a
// range of strings (MongoDB's type bracketing).
type Bounds = { $gt?: string; $gte?: string; $lt?: string; $lte?: string };
const cmpStr = (a: string, b: string) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
const inRange = (b: Bounds) => (d: Doc) =>
  typeof d._id === 'string' &&
  (b.$gt === undefined || cmpStr(d._id, b.$gt) > 0) &&
  (b.$gte === undefined || cmpStr(d._id, b.$gte) >= 0) &&
  (b.$lt === undefined || cmpStr(d._id, b.$lt) < 0) &&
  (b.$lte === undefined || cmpStr(d._id, b.$lte) <= 0);
const byId = (dir: 1 | -1) => (x: Doc, y: Doc) => dir * cmpStr(x._id as string, y._id as string);
const ids = (ds: Document[]) => ds.map((d) => d._id as Id);

describe('devdb _id pushdown: ranges', () => {
  it('the data tells UTF-8 byte order from JavaScript string order', () => {
    const strs = docs.map((d) => d._id).filter((id): id is string => typeof id === 'string');
    expect([...strs].sort(cmpStr)).not.toEqual([...strs].sort());
    expect(cmpStr('😀', '\uffff')).toBeGreaterThan(0);
    expect('😀' < '\uffff').toBe(true);
  });

  // [lower, upper] pairs: each subset of $gt/$gte (lower) and $lt/$lte (upper) is checked
  const ordered = () =>
    docs
      .filter(inRange({}))
      .sort(byId(1))
      .map((d) => d._id as string);
  const pairs: [string, () => [string, string], boolean][] = [
    // name, bounds, narrow (between them, an index scan on both backends whatever the statistics)
    [
      'stored ids of one visitor',
      () => {
        const f = ordered().filter((id) => id.startsWith('acc_1|v|iq_3|'));
        return [f[3]!, f[20]!];
      },
      true,
    ],
    ["a visitor's search range", () => ['acc_2|v|iq_7|', 'acc_2|v|iq_7|~'], true],
    ["ObjectIds' hex", () => ['6', '7'], true],
    ['numbers and dates as text', () => ['0', '9~'], true],
    ['beyond ASCII', () => ['~', '😀'], true],
    ['from the empty string', () => ['', 'a'], false],
  ];
  const subsets = Array.from({ length: 15 }, (_, m) => m + 1).map((m) => ['$gt', '$gte', '$lt', '$lte'].filter((_, bit) => m & (1 << bit)) as (keyof Bounds)[]);

  for (const [pairName, pair, narrow] of pairs) {
    for (const ops of subsets) {
      it(`${pairName}: ${ops.join(' ')}`, async () => {
        const [lo, hi] = pair();
        const b: Bounds = Object.fromEntries(ops.map((op) => [op, op.startsWith('$g') ? lo : hi]));
        const filter = { _id: b } as Filter<Doc>;
        const want = expected(inRange(b));
        const asc = [...want].sort(byId(1));

        expect(await col.countDocuments(filter)).toBe(want.length);
        expect(sorted(await col.find(filter).project({ _id: 1 }).toArray())).toEqual(sorted(want.map((d) => ({ _id: d._id }))));
        expect(await col.find(filter).sort({ _id: 1 }).limit(7).toArray()).toEqual(asc.slice(0, 7));
        expect(await col.find(filter).sort({ _id: -1 }).limit(101).toArray()).toEqual([...asc].reverse().slice(0, 101));
        expect(ids(await col.find(filter).sort({ _id: -1 }).project({ _id: 1 }).toArray())).toEqual(ids([...asc].reverse()));
        // no sort: any 5 of the matches
        const some = await col.find(filter).limit(5).toArray();
        expect(some).toHaveLength(Math.min(5, want.length));
        expect(new Set(some.map((d) => key(d._id))).size).toBe(some.length);
        for (const d of some) expect(want.map(canon)).toContain(canon(d));

        if (ferret) {
          const e = await col.find(filter).sort({ _id: -1 }).limit(101).explain('queryPlanner');
          const plan = JSON.stringify(e.queryPlanner);
          expect([e.filterPushdown, e.sortPushdown, e.limitPushdown]).toEqual([true, true, true]);
          // (one bound alone may select most of the collection, which PostgreSQL may rather scan)
          if (narrow && ops.some((op) => op.startsWith('$g')) && ops.some((op) => op.startsWith('$l'))) {
            expect(plan).toMatch(INDEXED);
            // ordered by the index: no sort step
            expect(plan).not.toMatch(/TEMP B-TREE|"Node Type":"Sort"/);
          }
          const unsorted = await col.find(filter).limit(5).explain('queryPlanner');
          expect([unsorted.filterPushdown, unsorted.sortPushdown, unsorted.limitPushdown]).toEqual([true, false, true]);
        }
      });
    }
  }

  // ranges with something the backend cannot order or limit by: other keys, a
  // skip, another sort; and conditions that are not string ranges
  const range: Bounds = { $gt: 'acc_2|v|iq_7|', $lt: 'acc_2|v|iq_7|~' };
  const cases: [string, Filter<Doc>, (d: Doc) => boolean, { sort?: Document; skip?: number; limit?: number }, boolean][] = [
    ['a range and another key', { _id: range, group: 1 }, (d) => inRange(range)(d) && d.group === 1, { sort: { _id: -1 }, limit: 3 }, true],
    ['a range and a dotted key', { _id: range, 'sub.k': 0 }, (d) => inRange(range)(d) && d.sub?.k === 0, { sort: { _id: -1 }, limit: 3 }, true],
    ['a range and $or', { _id: range, $or: [{ n: 1 }, { n: 2 }] }, (d) => inRange(range)(d) && [1, 2].includes(d.n), { sort: { _id: 1 }, limit: 4 }, true],
    ['a range with a skip', { _id: range }, inRange(range), { sort: { _id: -1 }, skip: 2, limit: 3 }, true],
    ['a range sorted by _id and another key', { _id: range }, inRange(range), { sort: { _id: -1, n: 1 }, limit: 3 }, true],
    ['a range sorted by another key', { _id: range }, inRange(range), { sort: { n: 1, _id: 1 }, limit: 5 }, true],
    ['a string and a number bound (nothing matches)', { _id: { $gt: 'a', $lt: 7 } }, () => false, { sort: { _id: 1 }, limit: 3 }, false],
    [
      'an ObjectId range',
      { _id: { $gt: oid0 } },
      (d) => d._id instanceof ObjectId && d._id.toHexString() > oid0.toHexString(),
      { sort: { _id: 1 }, limit: 3 },
      false,
    ],
    ['a range and $ne', { _id: { ...range, $ne: family[6] } }, (d) => inRange(range)(d) && d._id !== family[6], { sort: { _id: 1 }, limit: 3 }, false],
    ['a number range', { _id: { $gte: 0, $lt: 100 } }, (d) => typeof d._id === 'number' && d._id >= 0 && d._id < 100, { sort: { _id: 1 } }, false],
  ];
  for (const [name, filter, pred, opts, pushdown] of cases) {
    it(`find: ${name}`, async () => {
      const want = expected(pred);
      let cursor = col.find(filter);
      if (opts.sort) cursor = cursor.sort(opts.sort);
      if (opts.skip) cursor = cursor.skip(opts.skip);
      if (opts.limit) cursor = cursor.limit(opts.limit);
      const got = await cursor.toArray();
      const sortKeys = Object.entries(opts.sort ?? {}) as [string, 1 | -1][];
      const ordered = [...want].sort((x, y) => {
        for (const [k, dir] of sortKeys) {
          const [a, b] = k === '_id' ? [x._id, y._id] : [x[k as 'n'], y[k as 'n']];
          // (each case's matches have one type of _id)
          const c = typeof a === 'string' ? cmpStr(a, b as string) : typeof a === 'number' ? a - (b as number) : key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0;
          if (c) return dir * c;
        }
        return 0;
      });
      expect(got).toEqual(ordered.slice(opts.skip ?? 0, opts.limit ? (opts.skip ?? 0) + opts.limit : undefined));
      expect(await col.countDocuments(filter)).toBe(want.length);
      if (ferret) {
        // (FerretDB's explain wants skip as a long; the driver sends an int)
        const cmd = {
          find: col.collectionName,
          filter,
          ...(opts.sort && { sort: opts.sort }),
          ...(opts.skip && { skip: Long.fromNumber(opts.skip) }),
          ...(opts.limit && { limit: opts.limit }),
        };
        const e = await col.db.command({ explain: cmd, verbosity: 'queryPlanner' });
        if (pushdown || /detail=/.test(JSON.stringify(e.queryPlanner))) expect(e.filterPushdown).toBe(pushdown);
        expect([e.sortPushdown, e.limitPushdown]).toEqual([false, false]);
        if (pushdown) expect(JSON.stringify(e.queryPlanner)).toMatch(INDEXED);
      }
    });
  }

  it('findOne with a sort, and a cursor over several batches', async () => {
    const want = expected(inRange(range)).sort(byId(1));
    expect(await col.findOne({ _id: range }, { sort: { _id: -1 } })).toEqual(want.at(-1));
    expect(await col.find({ _id: range }).sort({ _id: 1 }).batchSize(4).limit(19).toArray()).toEqual(want.slice(0, 19));
    expect(
      await col
        .find({ _id: { $gte: 'acc_0|' } })
        .sort({ _id: 1 })
        .batchSize(50)
        .limit(555)
        .toArray(),
    ).toEqual(
      expected(inRange({ $gte: 'acc_0|' }))
        .sort(byId(1))
        .slice(0, 555),
    );
  });
});

describe('devdb _id pushdown: writes on ranges', () => {
  it('updateMany, deleteMany and findOneAndUpdate on a range touch exactly the matching documents', async () => {
    const b: Bounds = { $gte: 'acc_3|v|iq_1|', $lt: 'acc_3|v|iq_4|' };
    const up = await col.updateMany({ _id: b }, { $set: { tag: 'r' } });
    const hit = expected(inRange(b));
    expect(up.matchedCount).toBe(hit.length);
    for (const d of hit) d.tag = 'r';
    expect(sorted(await col.find({ tag: 'r' }).toArray())).toEqual(sorted(hit));

    const last = [...hit].sort(byId(-1))[0]!;
    const after = await col.findOneAndUpdate({ _id: b }, { $inc: { n: 10 } }, { sort: { _id: -1 }, returnDocument: 'after' });
    last.n += 10;
    expect(after).toEqual(last);

    const gone = expected((d) => inRange(b)(d) && d.group === 2);
    expect((await col.deleteMany({ _id: b, group: 2 })).deletedCount).toBe(gone.length);
    docs = docs.filter((d) => !gone.includes(d));
    expect(await col.find({ _id: b }).sort({ _id: 1 }).toArray()).toEqual(expected(inRange(b)).sort(byId(1)));
  });
});

describe('devdb _id pushdown: writes with _id and other keys', () => {
  const find = (id: Id) => col.findOne({ _id: id });
  const local = (id: Id) => docs.find((d) => idEq(d._id, id))!;

  it('updateOne on _id and a compare-and-swap key changes the document only when the key holds', async () => {
    const id = strId(100);
    const n = local(id).n;
    const miss = await col.updateOne({ _id: id, n: n + 1 }, { $set: { cas: 1 } });
    expect([miss.matchedCount, miss.modifiedCount]).toEqual([0, 0]);
    const hit = await col.updateOne({ _id: id, n }, { $set: { cas: 1 }, $inc: { n: 1 } });
    expect([hit.matchedCount, hit.modifiedCount]).toEqual([1, 1]);
    local(id).cas = 1;
    local(id).n = n + 1;
    // the old value no longer matches
    expect((await col.updateOne({ _id: id, n }, { $set: { cas: 2 } })).matchedCount).toBe(0);
    expect(await find(id)).toEqual(local(id));
    expect(sorted(await col.find({ cas: { $exists: true } }).toArray())).toEqual(sorted([local(id)]));
  });

  it('findOneAndUpdate on _id and another key returns the updated document only when the key holds', async () => {
    const id = strId(200);
    const n = local(id).n;
    expect(await col.findOneAndUpdate({ _id: id, group: local(id).group + 1 }, { $inc: { n: 100 } })).toBeNull();
    const after = await col.findOneAndUpdate({ _id: id, n, group: local(id).group }, { $inc: { n: 100 } }, { returnDocument: 'after' });
    local(id).n = n + 100;
    expect(after).toEqual(local(id));
    expect(await col.findOneAndUpdate({ _id: id, n }, { $inc: { n: 100 } })).toBeNull();
    expect(await find(id)).toEqual(local(id));
  });

  it('deleteOne on _id and another key deletes only when the key holds', async () => {
    const id = strId(300);
    expect((await col.deleteOne({ _id: id, n: local(id).n + 1 })).deletedCount).toBe(0);
    expect(await find(id)).toEqual(local(id));
    expect((await col.deleteOne({ _id: id, n: local(id).n })).deletedCount).toBe(1);
    docs = docs.filter((d) => d._id !== id);
    expect(await find(id)).toBeNull();
    expect(await col.countDocuments({ _id: { $in: [strId(299), id, strId(301)] } })).toBe(2);
  });

  it('updateMany and deleteMany on an $in and another key touch exactly the matching documents', async () => {
    const ids = [...Array.from({ length: 30 }, (_, i) => strId(1_000 + i)), strId(1_000), 'missing', oid1];
    const pred = (d: Doc) => inIds(ids)(d) && d.group === 1;
    const want = expected(pred);
    const up = await col.updateMany({ _id: { $in: ids }, group: 1 }, { $set: { tag: 'x' } });
    expect(up.matchedCount).toBe(want.length);
    for (const d of want) d.tag = 'x';
    expect(sorted(await col.find({ tag: 'x' }).toArray())).toEqual(sorted(want));

    const gone = expected((d) => inIds(ids)(d) && d.group === 0);
    expect((await col.deleteMany({ _id: { $in: ids }, group: 0 })).deletedCount).toBe(gone.length);
    docs = docs.filter((d) => !gone.includes(d));
    expect(sorted(await col.find({ _id: { $in: ids } }).toArray())).toEqual(sorted(expected(inIds(ids))));
  });

  it('an upsert on _id and another key that matches nothing inserts one document with both', async () => {
    const r = await col.updateOne({ _id: 'fresh', n: 5 }, { $set: { group: 9 } }, { upsert: true });
    expect(r.upsertedId).toBe('fresh');
    docs.push({ _id: 'fresh', n: 5, group: 9 });
    expect(await find('fresh')).toEqual({ _id: 'fresh', n: 5, group: 9 });
  });

  it('the collection still holds exactly the expected documents', async () => {
    expect(await col.countDocuments({})).toBe(docs.length);
    const sample = Array.from({ length: 100 }, (_, i) => strId(i * 199));
    expect(sorted(await col.find({ _id: { $in: sample } }).toArray())).toEqual(sorted(expected(inIds(sample))));
  });
});
