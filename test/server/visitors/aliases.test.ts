// VisitorAliases.survivors on the real database: the batched resolution
// related visitors read their relatives with. Each id answers the visitor it
// stands for now (itself, or the end of its merges), in one read when none
// was merged and one more per merge hop, up to its bound; deleted ids,
// another account's, and chains longer than the bound are absent.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VisitorDoc } from '../../../server/store/visitors.js';
import { VisitorAliases } from '../../../server/visitors/aliases.js';
import { createHarness, type Harness } from '../../support/harness.js';

let h: Harness;
let aliases: VisitorAliases;
const reads: string[] = [];
beforeAll(async () => {
  h = await createHarness(import.meta.filename);
  aliases = new VisitorAliases(h.store);
  const getMany = h.store.visitors.getMany.bind(h.store.visitors);
  h.store.visitors.getMany = (ids) => {
    reads.push([...ids].sort().join(','));
    return getMany(ids);
  };
});
afterAll(async () => {
  await h.close();
});

let n = 0;
async function visitor(accountId: string, mergedInto?: string): Promise<string> {
  const _id = `iq_01JD0S3V6ZQ8Y0K2W3ZP4X${String(++n).padStart(4, '0')}`;
  const doc: VisitorDoc = { _id, accountId, firstSeenAt: 1, lastSeenAt: 1, visitCount: 1, components: [], recent: [], rev: 0 };
  await h.store.visitors.create(doc);
  if (mergedInto) await h.store.db.collection<VisitorDoc>('visitors').updateOne({ _id }, { $set: { mergedInto } });
  return _id;
}

describe('VisitorAliases.survivors', () => {
  it('answers each id its visitor now: itself, or the end of its merges; one read when none was merged', async () => {
    const [a, b] = [await visitor('acc_a'), await visitor('acc_a')];
    reads.length = 0;
    const found = await aliases.survivors('acc_a', [a, b, a]);
    expect([...found].map(([id, d]) => [id, d._id])).toEqual([
      [a, a],
      [b, b],
    ]);
    expect(reads).toHaveLength(1);

    const end = await visitor('acc_a');
    const mid = await visitor('acc_a', end);
    const start = await visitor('acc_a', mid);
    reads.length = 0;
    const merged = await aliases.survivors('acc_a', [start, a]);
    expect(merged.get(start)?._id).toBe(end);
    expect(merged.get(a)?._id).toBe(a);
    // The ids, then the merged one's target, then its target's.
    expect(reads).toEqual([[start, a].sort().join(','), mid, end]);
  });

  it("leaves out a deleted id, another account's visitor, and a chain longer than its reads", async () => {
    const mine = await visitor('acc_a');
    const theirs = await visitor('acc_b');
    const gone = 'iq_01JD0S3V6ZQ8Y0K2W3ZP4X9999';
    // Merged into another account's visitor (never made by identify, but never to be followed either).
    const crossing = await visitor('acc_a', theirs);
    const head = await visitor('acc_a');
    let tail = head;
    for (let i = 0; i < 3; i++) tail = await visitor('acc_a', tail);
    const found = await aliases.survivors('acc_a', [mine, theirs, gone, crossing, tail], 3);
    expect([...found.keys()]).toEqual([mine]);
    const short = await aliases.survivors('acc_a', [tail], 3);
    expect(short.has(tail)).toBe(false);
    // With one read more, the long chain resolves; by default as far as survivor() follows one id.
    expect((await aliases.survivors('acc_a', [tail], 4)).get(tail)?._id).toBe(head);
    expect((await aliases.survivors('acc_a', [tail])).get(tail)?._id).toBe(head);
    expect((await aliases.survivor('acc_a', tail))?._id).toBe(head);
  });

  it('ids on one chain resolve from what the others read, however far along it', async () => {
    let id = await visitor('acc_a');
    const end = id;
    const chain = [id];
    for (let i = 0; i < 4; i++) chain.unshift((id = await visitor('acc_a', id)));
    // Its first three ids in one read, then the two hops past them: the head is four hops from the end.
    const found = await aliases.survivors('acc_a', chain.slice(0, 3), 3);
    expect(chain.slice(0, 3).map((x) => found.get(x)?._id)).toEqual([end, end, end]);
  });
});
