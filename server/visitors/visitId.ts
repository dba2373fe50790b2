// Visit ids are RFC 9562 UUIDv7: 48-bit Unix ms, then random bits, with the
// visit's sequence number in the top 30 bits of rand_b (the RFC's "dedicated
// counter" layout). The history cursor `before=<visit id>` therefore leads
// straight to the right page without any lookup.
import { randomBytes } from 'node:crypto';

const SEQ_BITS = 30;
export const MAX_SEQ = 2 ** SEQ_BITS - 1;

export function makeVisitId(timestampMs: number, seq: number): string {
  const b = randomBytes(16);
  let ts = BigInt(timestampMs);
  for (let i = 5; i >= 0; i--) {
    b[i] = Number(ts & 0xffn);
    ts >>= 8n;
  }
  b[6] = 0x70 | (b[6]! & 0x0f); // version 7
  const s = Math.min(seq, MAX_SEQ);
  // rand_b starts at bit 66: two variant bits (10) then our 30-bit sequence.
  b[8] = 0x80 | ((s >>> 24) & 0x3f);
  b[9] = (s >>> 16) & 0xff;
  b[10] = (s >>> 8) & 0xff;
  b[11] = s & 0xff;
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** The sequence number a visit id carries, or null when it is not one of ours. */
export function seqOfVisitId(id: string): number | null {
  const m = /^([0-9a-f]{8})-([0-9a-f]{4})-7([0-9a-f]{3})-([89ab][0-9a-f]{3})-([0-9a-f]{12})$/i.exec(id);
  if (!m) return null;
  const hex = (m[4]! + m[5]!).slice(0, 8);
  const v = Number.parseInt(hex, 16);
  return ((v >>> 0) & 0x3fffffff) >>> 0;
}
