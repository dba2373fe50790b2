// The dev database's FerretDB carries a patch (devdb/ferretdb-pushdown.patch)
// that narrows `{_id: x, ...}` and `{_id: {$in: [...]}, ...}` filters in SQL
// instead of scanning the collection. The Go filter stays authoritative, so
// whatever the patch selects, results must be exactly what the filters mean:
// checked here on 20,000 documents against the same filters evaluated in
// JavaScript, for reads and for the writes that share the query path. On
// FerretDB, explain also shows which filters were pushed down to an index.
// (Against real MongoDB the same checks run, without the explain ones.)
import { MongoClient, ObjectId, type Collection, type Document, type Filter } from 'mongodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { testDbName } from './support/harness.js';

type Id = string | number | ObjectId;
interface Doc {
  _id: Id;
  n: number;
  group: number;
  cas?: number;
  tag?: string;
}

const N = 20_000;
const strId = (i: number) => `d${String(i).padStart(5, '0')}`;
const oids = Array.from({ length: 5 }, (_, i) => new ObjectId(`65a0000000000000000000${String(i).padStart(2, '0')}`));
const [oid0, oid1, oid2, , oid4] = oids as [ObjectId, ObjectId, ObjectId, ObjectId, ObjectId];
// strings whose JSON encoding escapes or keeps unusual characters
const tricky = ['a<b>&c', 'é', 'emoji😀', 'q"uote', 'back\\slash', 'line\u2028sep', 'ctl\u0001', ''];

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
  ];
  for (let i = 0; i < docs.length; i += 5_000) await col.insertMany(docs.slice(i, i + 5_000).map((d) => ({ ...d })));
  const build = await db.admin().command({ buildInfo: 1 });
  ferret = 'ferretdbVersion' in build;
  if (ferret) {
    // the launcher indexes a new SQLite collection's `_id` within 200 ms
    for (let t = 0; t < 50 && !INDEXED.test((await explain({ _id: strId(1) })).plan); t++) await new Promise((r) => setTimeout(r, 100));
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
    ['_id equality with an operator on another key', { _id: strId(99), n: { $gte: 0 }, $or: [{ group: 0 }, { group: 1 }] }, (d) => d._id === strId(99) && [0, 1].includes(d.group), true],
    ['$in with duplicates and missing ids', { _id: { $in: [strId(5), strId(5), 'missing', strId(19_999), strId(0), 'd20000', strId(5)] } }, inIds([strId(5), strId(19_999), strId(0)]), true],
    ['$in of 20 ids and a key that excludes some', { _id: { $in: Array.from({ length: 20 }, (_, i) => strId(i * 997)) }, n: 3 }, (d) => inIds(Array.from({ length: 20 }, (_, i) => strId(i * 997)))(d) && d.n === 3, true],
    ['$in and $or beside it', { _id: { $in: [strId(1), strId(2), strId(3), strId(4)] }, $or: [{ n: 1 }, { group: 0 }] }, (d) => inIds([strId(1), strId(2), strId(3), strId(4)])(d) && (d.n === 1 || d.group === 0), true],
    ['$in of ObjectIds and strings', { _id: { $in: [oid0, strId(10), oid4, new ObjectId()] } }, inIds([oid0, strId(10), oid4]), true],
    ['$in of strings with unusual characters', { _id: { $in: tricky } }, (d) => tricky.includes(d._id as string), true],
    ['each unusual string by equality', { $or: tricky.map((_id) => ({ _id })) }, (d) => tricky.includes(d._id as string), false],
    ['an empty $in', { _id: { $in: [] } }, () => false, true],
    ['$in with a number (no pushdown)', { _id: { $in: [strId(1), 7, 'missing'] } }, (d) => d._id === strId(1) || d._id === 7, false],
    ['$in with a regex (no pushdown)', { _id: { $in: [/^d0000[12]$/, strId(3)] } }, (d) => /^d0000[123]$/.test(String(d._id)), false],
    ['$in of 1,001 ids (too many to push down)', { _id: { $in: Array.from({ length: 1_001 }, (_, i) => strId(i * 3)) } }, (d) => typeof d._id === 'string' && /^d\d{5}$/.test(d._id) && Number(d._id.slice(1)) % 3 === 0 && Number(d._id.slice(1)) <= 3_000, false],
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
