// The stored form of a visitor (server/store/visitors.ts): what is read
// back is what was written, whatever the form of each item.
import { describe, expect, it } from 'vitest';
import { decodeVisitor, encodeVisitor, type StoredVisitorDoc, type VisitorDoc } from '../../../server/store/visitors.js';

const summary = {
  seq: 1,
  requestId: 'req_1',
  id: 'v1',
  timestamp: 5,
  country: 'DE',
  city: '',
  region: '',
  asn: null,
  asnOrg: '',
  asnCategory: 'UNKNOWN',
  botProbability: 0.1,
  confidence: 0.9,
  riskFactors: ['A'],
};
const doc: VisitorDoc = {
  _id: 'iq_1',
  accountId: 'acc_1',
  firstSeenAt: 1,
  lastSeenAt: 5,
  visitCount: 2,
  components: [{ canvas: 'c1', fonts: 'A,B' }, { canvas: 'c2' }],
  prefixes: [{ p: '203.0.113.0/24', n: 2, last: 5 }],
  tokens: [{ hash: 'h', first: 1, last: 5, ephemeral: true }],
  suspects: [],
  recent: [{ t: 1, ip: '203.0.113.9', country: 'DE' }],
  visits: [summary, { ...summary, seq: 2, extra: 'kept' } as never],
  rev: 2,
};

describe('visitor codec', () => {
  it('round-trips every field; an item with other fields than the positional ones keeps their names', () => {
    const stored = encodeVisitor(doc);
    expect(decodeVisitor(stored)).toEqual(doc);
    expect(JSON.parse(stored.visits![0] as string)).toEqual(Object.values(summary));
    expect(JSON.parse(stored.visits![1] as string)).toEqual({ ...summary, seq: 2, extra: 'kept' });
    expect(stored.recent).toEqual(['[1,"203.0.113.9","DE"]']);
    expect(typeof stored.tokens).toBe('string');
  });

  it('reads items and lists stored as objects, alone or beside texts', () => {
    const mixed = { ...doc, visits: [summary, JSON.stringify(Object.values({ ...summary, seq: 2 }))], tokens: doc.tokens } as unknown as StoredVisitorDoc;
    expect(decodeVisitor(mixed)).toEqual({ ...doc, visits: [summary, { ...summary, seq: 2 }] });
  });

  it('leaves absent lists absent', () => {
    const bare = { _id: 'iq_2', accountId: 'acc_1', firstSeenAt: 1, lastSeenAt: 1, visitCount: 0, components: [], recent: [] } as VisitorDoc;
    expect(decodeVisitor(encodeVisitor(bare))).toEqual(bare);
    expect(Object.keys(encodeVisitor(bare)).sort()).toEqual(Object.keys(bare).sort());
  });
});
