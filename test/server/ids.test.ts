// The server's ULIDs: the time part is the given time, and the random part
// is distinct across many ids of one millisecond, also across the refills of
// the random byte pool (256 ids per 4 KB).
import { decodeTime, encodeTime } from 'ulid';
import { describe, expect, it } from 'vitest';
import { ulid } from '../../server/ids.js';

const CROCKFORD = /^[0-9A-HJKMNP-TV-Z]{26}$/;

describe('ulid', () => {
  it('encodes the given time and draws a random part that does not repeat', () => {
    const t = Date.UTC(2026, 10, 26);
    const ids = Array.from({ length: 10_000 }, () => ulid(t));
    expect(ids.every((id) => CROCKFORD.test(id) && id.startsWith(encodeTime(t, 10)))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    // Every character of the random part takes many values (a stuck byte of the pool would show here).
    for (let i = 10; i < 26; i++) expect(new Set(ids.map((id) => id[i])).size).toBe(32);
  });

  it('uses the current time when none is given', () => {
    const before = Date.now();
    const t = decodeTime(ulid());
    expect(t).toBeGreaterThanOrEqual(before);
    expect(t).toBeLessThanOrEqual(Date.now());
  });
});
