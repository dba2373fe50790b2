// One list in memory, for `inList(name, value)`: exact values with their
// expiry and, in an ip list, the ranges its entries cover, so that an
// address also matches every CIDR entry that contains it.
//
// CIDR blocks are nested or disjoint, so the ranges of one IP version cut
// the address space into segments each covered by one chain of blocks; a
// segment keeps the latest expiry along its chain (an address is matched
// while any block containing it has not expired: inside an expired /16 and a
// live /24 is inside). A lookup is a binary search over the segment starts,
// without allocating. The segments are rebuilt by the first lookup after a
// change of the ranges (entries arrive in batches, by the cache's loads);
// single IPv4 addresses are found by their text and take no part.
import { v4Key, v4ToString, v6Words } from '../edge/address.js';
import type { ListEntryState, ListKind } from '../store/lists.js';

/** Segment starts ascending (IPv4: one word each; IPv6: four, most significant first), and the latest expiry covering each (-Infinity: none). */
interface Segments {
  starts: Uint32Array;
  expiries: Float64Array;
}

const NONE: Segments = { starts: new Uint32Array(0), expiries: new Float64Array(0) };
const lookupWords = new Uint32Array(4);

export class ListIndex {
  /** Value → Unix ms from which it no longer matches (Infinity: never). */
  private readonly values = new Map<string, number>();
  private v4 = NONE;
  private v6 = NONE;
  private stale = false;

  constructor(private readonly kind: ListKind) {}

  /** Entries held, expired ones included. */
  get size(): number {
    return this.values.size;
  }

  /** Upserts entries and drops removed ones; applying the same state twice changes nothing. */
  apply(entries: Iterable<ListEntryState>): void {
    for (const e of entries) {
      const until = e.removed ? undefined : (e.expiresAt ?? Infinity);
      if (this.values.get(e.value) === until) continue;
      if (until === undefined) this.values.delete(e.value);
      else this.values.set(e.value, until);
      if (this.kind === 'ip' && isRange(e.value)) this.stale = true;
    }
  }

  /** Whether the list holds `value` at `now` (Unix ms); an address, in an ip list, also by any range containing it. */
  has(value: string | number, now: number): boolean {
    if ((this.values.get(String(value)) ?? -Infinity) > now) return true;
    if (this.kind !== 'ip' || typeof value !== 'string') return false;
    if (this.stale) this.rebuild();
    // Four decimal octets are canonical text: such an address was looked up above.
    const v4 = v4Key(value);
    if (v4 >= 0) return find(this.v4, 1, lookupWords, v4) > now;
    if (!v6Words(value, lookupWords)) return false;
    if (lookupWords[0] === 0 && lookupWords[1] === 0 && lookupWords[2] === 0xffff) {
      const mapped = lookupWords[3]!;
      return (this.values.get(v4ToString(mapped)) ?? -Infinity) > now || find(this.v4, 1, lookupWords, mapped) > now;
    }
    return find(this.v6, 4, lookupWords, 0) > now;
  }

  private rebuild(): void {
    const v4 = new RangeList();
    const v6 = new RangeList();
    // Values are canonical (listValues.ts): an IPv4 range has a prefix length, a bare IPv6 address is its /128.
    for (const [value, until] of this.values) {
      if (!isRange(value)) continue;
      const slash = value.indexOf('/');
      const address = slash === -1 ? value : value.slice(0, slash);
      const length = slash === -1 ? 128 : Number(value.slice(slash + 1));
      const k = v4Key(address);
      if (k >= 0) v4.add([0, 0, 0, k], 96 + length, until);
      else if (v6Words(address, lookupWords)) v6.add(lookupWords, length, until);
    }
    this.v4 = v4.segments(V4_MAX, 1);
    this.v6 = v6.segments(V6_MAX, 4);
    this.stale = false;
  }
}

/** Whether an ip list's value goes into the segments: all but single IPv4 addresses. */
const isRange = (value: string) => value.includes('/') || value.includes(':');

/** The mask of a 32-bit word that keeps its first `bits` bits (≤ 0: none, ≥ 32: all). */
const wordMask = (bits: number) => (bits <= 0 ? 0 : bits >= 32 ? 0xffffffff : (0xffffffff << (32 - bits)) >>> 0);

const V4_MAX = Uint32Array.of(0, 0, 0, 0xffffffff);
const V6_MAX = Uint32Array.of(0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff);

/** Sign of a[4i..4i+3] − b[4j..4j+3]. */
function cmp(a: ArrayLike<number>, i: number, b: ArrayLike<number>, j: number): number {
  for (let w = 0; w < 4; w++) {
    const x = a[4 * i + w]!;
    const y = b[4 * j + w]!;
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

/**
 * CIDR ranges as 128-bit numbers in four words (IPv4 as the last word, its
 * prefix length plus 96), so that one sweep serves both versions.
 */
class RangeList {
  private readonly first: number[] = [];
  private readonly last: number[] = [];
  private readonly lengths: number[] = [];
  private readonly until: number[] = [];

  add(words: ArrayLike<number>, length: number, until: number): void {
    for (let w = 0; w < 4; w++) {
      const mask = wordMask(length - 32 * w);
      this.first.push((words[w]! & mask) >>> 0);
      this.last.push((words[w]! | ~mask) >>> 0);
    }
    this.lengths.push(length);
    this.until.push(until);
  }

  /**
   * Sorted by start, outer before inner, a stack holds the chain of ranges
   * around the position reached; a segment begins wherever the latest
   * expiry along the chain changes. `max` is the version's last address;
   * `words` of each start are kept (the last one for IPv4).
   */
  segments(max: Uint32Array, words: 1 | 4): Segments {
    const { first, last, lengths, until } = this;
    const order = Array.from(lengths, (_, i) => i).sort((i, j) => cmp(first, i, first, j) || lengths[i]! - lengths[j]!);
    const starts: number[] = [];
    const expiries: number[] = [];
    const pos = new Uint32Array(4);
    let open = false; // whether `pos` is an address not yet in a segment
    const emit = (e: number) => {
      if ((expiries.length ? expiries[expiries.length - 1] : -Infinity) === e) return;
      for (let w = 4 - words; w < 4; w++) starts.push(pos[w]!);
      expiries.push(e);
    };
    const stack: number[] = [];
    const covering: number[] = [];
    const around = () => (covering.length ? covering[covering.length - 1]! : -Infinity);
    const close = () => {
      const top = stack.pop()!;
      const e = covering.pop()!;
      if (open && cmp(pos, 0, last, top) <= 0) emit(e);
      open = cmp(last, top, max, 0) < 0;
      if (open) increment(pos, last, top);
    };
    for (const r of order) {
      while (stack.length && cmp(last, stack[stack.length - 1]!, first, r) < 0) close();
      if (open && cmp(pos, 0, first, r) < 0) emit(around());
      for (let w = 0; w < 4; w++) pos[w] = first[4 * r + w]!;
      open = true;
      covering.push(Math.max(until[r]!, around()));
      stack.push(r);
    }
    while (stack.length) close();
    if (open) emit(-Infinity);
    return { starts: Uint32Array.from(starts), expiries: Float64Array.from(expiries) };
  }
}

/** pos = a[4i..4i+3] + 1 (the caller knows it does not overflow). */
function increment(pos: Uint32Array, a: readonly number[], i: number): void {
  for (let w = 0; w < 4; w++) pos[w] = a[4 * i + w]!;
  for (let w = 3; w >= 0; w--) {
    pos[w] = pos[w]! + 1;
    if (pos[w] !== 0) return;
  }
}

/** The expiry of the segment holding the address (IPv4: `v4`; IPv6: the words `k`), -Infinity when none does. */
function find(s: Segments, words: 1 | 4, k: Uint32Array, v4: number): number {
  let lo = 0;
  let hi = s.expiries.length - 1;
  let hit = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    if (words === 1 ? s.starts[mid]! <= v4 : cmp(s.starts, mid, k, 0) <= 0) {
      hit = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  return hit < 0 ? -Infinity : s.expiries[hit]!;
}
