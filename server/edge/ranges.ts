// Sorted, non-overlapping address ranges with binary search: the one structure
// behind CIDR lists (Tor exits, blocklists, trusted proxies, reserved space) and
// value tables (IP → ASN). IPv4 keys are uint32 in a Uint32Array; IPv6 keys are
// four uint32 words per address (most significant first), so a lookup never
// allocates a BigInt. BigInt is used only while building.
import { bigToWords, parseCidr, v4Key, v4ToString, v6ToString, v6Words, wordsToBig, type Ip } from './address.js';

const V4_MAX = 0xffffffff;
const V6_MAX = (1n << 128n) - 1n;

// ---------------------------------------------------------------------------
// Binary search

/** Index of the last range whose start ≤ k, if that range also contains k; else -1. */
function find4(starts: Uint32Array, ends: Uint32Array, k: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  let hit = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    if (starts[mid]! <= k) {
      hit = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  return hit >= 0 && ends[hit]! >= k ? hit : -1;
}

/** Sign of (a[4i..4i+3] - k). */
function cmp6(a: Uint32Array, i: number, k: Uint32Array): number {
  const o = i * 4;
  for (let w = 0; w < 4; w++) {
    const x = a[o + w]!;
    const y = k[w]!;
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

function find6(starts: Uint32Array, ends: Uint32Array, k: Uint32Array): number {
  let lo = 0;
  let hi = starts.length / 4 - 1;
  let hit = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    if (cmp6(starts, mid, k) <= 0) {
      hit = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  return hit >= 0 && cmp6(ends, hit, k) >= 0 ? hit : -1;
}

const lookupWords = new Uint32Array(4);

/** Largest CIDR block that contains k and lies inside [first, last] (k's /32 at worst). */
function prefix4(k: number, first: number, last: number): string {
  for (let len = 0; len < 32; len++) {
    const size = 2 ** (32 - len);
    const net = Math.floor(k / size) * size;
    if (net >= first && net + size - 1 <= last) return `${v4ToString(net)}/${len}`;
  }
  return `${v4ToString(k)}/32`;
}

function prefix6(k: bigint, first: bigint, last: bigint): string {
  for (let len = 0n; len < 128n; len++) {
    const host = 128n - len;
    const net = (k >> host) << host;
    if (net >= first && (net | ((1n << host) - 1n)) <= last) return `${v6ToString(net)}/${len}`;
  }
  return `${v6ToString(k)}/128`;
}

// ---------------------------------------------------------------------------
// Building: stage, sort, then merge (sets) or resolve overlaps (tables)

/** Indexable keys: a JS array, or a Uint32Array for IPv4. */
interface Keys<K> {
  readonly length: number;
  [i: number]: K;
}

interface Staged<K> {
  firsts: Keys<K>;
  lasts: Keys<K>;
}

/** k ± 1 for either key type (TS allows no arithmetic on a number | bigint generic). */
interface KeyOps<K> {
  succ: (k: K) => K;
  pred: (k: K) => K;
  /** Output storage: typed for IPv4, where pushing 400k doubles into JS arrays costs more than the rest of a build. */
  alloc(n: number): Keys<K>;
  trim(keys: Keys<K>, n: number): Keys<K>;
}
const OPS4: KeyOps<number> = {
  succ: (k) => k + 1,
  pred: (k) => k - 1,
  alloc: (n) => new Uint32Array(n),
  trim: (keys, n) => (keys as Uint32Array).subarray(0, n),
};
const OPS6: KeyOps<bigint> = {
  succ: (k) => k + 1n,
  pred: (k) => k - 1n,
  alloc: (n) => new Array<bigint>(n),
  trim: (keys, n) => (keys as bigint[]).slice(0, n),
};

/** IPv4 staging in growable typed arrays: the ASN table stages 412k ranges. */
class Stage4 {
  private f = new Uint32Array(1024);
  private l = new Uint32Array(1024);
  private n = 0;
  add(first: number, last: number): void {
    if (!(Number.isInteger(first) && Number.isInteger(last) && first >= 0 && first <= last && last <= V4_MAX)) {
      throw new RangeError(`bad IPv4 range ${first}-${last}`);
    }
    if (this.n === this.f.length) {
      const f = new Uint32Array(this.n * 2);
      const l = new Uint32Array(this.n * 2);
      f.set(this.f);
      l.set(this.l);
      this.f = f;
      this.l = l;
    }
    this.f[this.n] = first;
    this.l[this.n++] = last;
  }
  view(): Staged<number> {
    return { firsts: this.f.subarray(0, this.n), lasts: this.l.subarray(0, this.n) };
  }
}

class Stage6 {
  readonly firsts: bigint[] = [];
  readonly lasts: bigint[] = [];
  add(first: bigint, last: bigint): void {
    if (!(first >= 0n && first <= last && last <= V6_MAX)) throw new RangeError(`bad IPv6 range ${first}-${last}`);
    this.firsts.push(first);
    this.lasts.push(last);
  }
  view(): Staged<bigint> {
    return this;
  }
}

/**
 * Staged indexes sorted by (first asc, last desc, insertion asc), so outer
 * ranges come before the ones nested in them; null when already in order.
 */
function sortedOrder<K extends number | bigint>(s: Staged<K>): Uint32Array | null {
  const n = s.firsts.length;
  let sorted = true;
  for (let i = 1; i < n && sorted; i++) {
    const a = s.firsts[i - 1]!;
    const b = s.firsts[i]!;
    if (a > b || (a === b && s.lasts[i - 1]! < s.lasts[i]!)) sorted = false;
  }
  if (sorted) return null;
  const order = new Uint32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  return order.sort((i, j) => {
    const fi = s.firsts[i]!;
    const fj = s.firsts[j]!;
    if (fi !== fj) return fi < fj ? -1 : 1;
    const li = s.lasts[i]!;
    const lj = s.lasts[j]!;
    if (li !== lj) return li > lj ? -1 : 1;
    return i - j;
  });
}

/** Union of the staged ranges, adjacent ones joined. */
function union<K extends number | bigint>(s: Staged<K>, { succ }: KeyOps<K>): Staged<K> {
  const order = sortedOrder(s);
  const firsts: K[] = [];
  const lasts: K[] = [];
  for (let j = 0; j < s.firsts.length; j++) {
    const i = order ? order[j]! : j;
    const f = s.firsts[i]!;
    const l = s.lasts[i]!;
    const n = lasts.length;
    if (n > 0 && f <= succ(lasts[n - 1]!)) {
      if (l > lasts[n - 1]!) lasts[n - 1] = l;
    } else {
      firsts.push(f);
      lasts.push(l);
    }
  }
  return { firsts, lasts };
}

/** Max-heap of staged indexes by (first, -last, insertion): the most specific range on top. */
class SpecificityHeap<K extends number | bigint> {
  private readonly items: number[] = [];
  constructor(private readonly s: Staged<K>) {}
  get size(): number {
    return this.items.length;
  }
  top(): number {
    return this.items[0]!;
  }
  private above(a: number, b: number): boolean {
    const fa = this.s.firsts[a]!;
    const fb = this.s.firsts[b]!;
    if (fa !== fb) return fa > fb;
    const la = this.s.lasts[a]!;
    const lb = this.s.lasts[b]!;
    if (la !== lb) return la < lb;
    return a > b;
  }
  push(x: number): void {
    const h = this.items;
    h.push(x);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.above(h[i]!, h[p]!)) break;
      [h[i], h[p]] = [h[p]!, h[i]!];
      i = p;
    }
  }
  pop(): void {
    const h = this.items;
    const last = h.pop()!;
    if (h.length === 0) return;
    h[0] = last;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < h.length && this.above(h[l]!, h[m]!)) m = l;
      if (r < h.length && this.above(h[r]!, h[m]!)) m = r;
      if (m === i) break;
      [h[i], h[m]] = [h[m]!, h[i]!];
      i = m;
    }
  }
}

/**
 * Disjoint pieces of the staged ranges in which every address keeps the value
 * of the most specific range containing it (latest start, then shortest, then
 * last added). src[i] is the staged index whose value piece i carries; null
 * src means the staged ranges were already sorted and disjoint (real data
 * nearly always is) and are returned as they are.
 */
function resolve<K extends number | bigint>(s: Staged<K>, ops: KeyOps<K>): Staged<K> & { src: Uint32Array | null } {
  const order = sortedOrder(s);
  const n = s.firsts.length;
  const at = (j: number): number => (order ? order[j]! : j);
  let disjoint = true;
  for (let j = 1; j < n && disjoint; j++) if (s.firsts[at(j)]! <= s.lasts[at(j - 1)]!) disjoint = false;
  if (disjoint && !order) return { firsts: s.firsts, lasts: s.lasts, src: null };

  const out = new Pieces(n, ops);
  // Clusters of ranges chained by overlaps go through the sweep; the rest is copied.
  let j = 0;
  while (j < n) {
    let reach = s.lasts[at(j)]!;
    let k = j + 1;
    for (; k < n && s.firsts[at(k)]! <= reach; k++) if (s.lasts[at(k)]! > reach) reach = s.lasts[at(k)]!;
    if (k === j + 1) out.emit(s.firsts[at(j)]!, s.lasts[at(j)]!, at(j));
    else sweep(s, order ? order.subarray(j, k) : Uint32Array.from({ length: k - j }, (_, i) => j + i), out, ops);
    j = k;
  }
  return out.result();
}

/** Output of resolve; n ranges cut into at most 2n - 1 pieces. */
class Pieces<K extends number | bigint> {
  private m = 0;
  private readonly firsts: Keys<K>;
  private readonly lasts: Keys<K>;
  private readonly src: Uint32Array;
  constructor(
    n: number,
    private readonly ops: KeyOps<K>,
  ) {
    this.firsts = ops.alloc(2 * n);
    this.lasts = ops.alloc(2 * n);
    this.src = new Uint32Array(2 * n);
  }
  /** Appends a piece, joining it to the previous one when contiguous with the same source. */
  emit(f: K, l: K, i: number): void {
    const m = this.m;
    if (m > 0 && this.src[m - 1] === i && this.ops.succ(this.lasts[m - 1]!) === f) {
      this.lasts[m - 1] = l;
    } else {
      this.firsts[m] = f;
      this.lasts[m] = l;
      this.src[m] = i;
      this.m++;
    }
  }
  result(): Staged<K> & { src: Uint32Array } {
    return { firsts: this.ops.trim(this.firsts, this.m), lasts: this.ops.trim(this.lasts, this.m), src: this.src.subarray(0, this.m) };
  }
}

/**
 * Sweep over one cluster (indexes in sorted order): the heap holds every range
 * that started at or before cur; expired ones are dropped when they surface.
 */
function sweep<K extends number | bigint>(s: Staged<K>, cluster: Uint32Array, out: Pieces<K>, { succ, pred }: KeyOps<K>): void {
  const heap = new SpecificityHeap(s);
  let next = 0;
  let cur = s.firsts[cluster[0]!]!;
  while (next < cluster.length || heap.size > 0) {
    if (heap.size === 0) cur = s.firsts[cluster[next]!]!;
    while (next < cluster.length && s.firsts[cluster[next]!]! <= cur) heap.push(cluster[next++]!);
    while (heap.size > 0 && s.lasts[heap.top()]! < cur) heap.pop();
    if (heap.size === 0) continue;
    const top = heap.top();
    // The piece ends where the top range ends or just before the next range starts.
    let end = s.lasts[top]!;
    if (next < cluster.length && s.firsts[cluster[next]!]! <= end) end = pred(s.firsts[cluster[next]!]!);
    out.emit(cur, end, top);
    cur = succ(end);
  }
}

// ---------------------------------------------------------------------------
// Public structures

/** Built arrays; construct RangeSet/RangeTable through their builders. */
export interface Compiled {
  starts4: Uint32Array;
  ends4: Uint32Array;
  starts6: Uint32Array;
  ends6: Uint32Array;
}

function compile(v4: Staged<number>, v6: Staged<bigint>): Compiled {
  const n6 = v6.firsts.length;
  const c: Compiled = {
    starts4: Uint32Array.from(v4.firsts),
    ends4: Uint32Array.from(v4.lasts),
    starts6: new Uint32Array(n6 * 4),
    ends6: new Uint32Array(n6 * 4),
  };
  for (let i = 0; i < n6; i++) {
    bigToWords(v6.firsts[i]!, c.starts6, i * 4);
    bigToWords(v6.lasts[i]!, c.ends6, i * 4);
  }
  return c;
}

/** Index of the range holding ip in its own family's table, or -1. */
function indexOf(c: Compiled, ip: Ip): number {
  if (ip.version === 4) {
    const k = v4Key(ip.address);
    return k < 0 ? -1 : find4(c.starts4, c.ends4, k);
  }
  return v6Words(ip.address, lookupWords) ? find6(c.starts6, c.ends6, lookupWords) : -1;
}

/** Membership set of addresses. Build with RangeSetBuilder or RangeSet.fromCidrs. */
export class RangeSet {
  constructor(private readonly c: Compiled) {}

  /** Entries that do not parse are returned in rejected, never guessed at. */
  static fromCidrs(list: Iterable<string>): { set: RangeSet; rejected: string[] } {
    const b = new RangeSetBuilder();
    const rejected: string[] = [];
    for (const text of list) if (!b.add(text)) rejected.push(text);
    return { set: b.build(), rejected };
  }

  has(ip: Ip): boolean {
    return indexOf(this.c, ip) >= 0;
  }

  /** Merged range counts per family. */
  get size(): { v4: number; v6: number } {
    return { v4: this.c.starts4.length, v6: this.c.starts6.length / 4 };
  }
}

export class RangeSetBuilder {
  private readonly v4 = new Stage4();
  private readonly v6 = new Stage6();

  /** Adds an address or CIDR; false (and nothing added) when it does not parse. */
  add(text: string): boolean {
    const r = parseCidr(text.trim());
    if (!r) return false;
    if (r.version === 4) this.v4.add(r.first, r.last);
    else this.v6.add(r.first, r.last);
    return true;
  }

  addV4(first: number, last: number): this {
    this.v4.add(first, last);
    return this;
  }

  addV6(first: bigint, last: bigint): this {
    this.v6.add(first, last);
    return this;
  }

  build(): RangeSet {
    return new RangeSet(compile(union(this.v4.view(), OPS4), union(this.v6.view(), OPS6)));
  }
}

/** Address → value table. Overlaps are resolved at build time: the most specific range wins. */
export class RangeTable<T> {
  constructor(
    private readonly c: Compiled,
    private readonly values4: T[],
    private readonly values6: T[],
  ) {}

  get(ip: Ip): T | undefined {
    const i = indexOf(this.c, ip);
    if (i < 0) return undefined;
    return ip.version === 4 ? this.values4[i] : this.values6[i];
  }

  /** The value and the largest CIDR around ip that lies inside its range. */
  match(ip: Ip): { value: T; prefix: string } | null {
    const i = indexOf(this.c, ip);
    if (i < 0) return null;
    if (ip.version === 4) {
      return { value: this.values4[i]!, prefix: prefix4(v4Key(ip.address), this.c.starts4[i]!, this.c.ends4[i]!) };
    }
    // indexOf left the parsed address in lookupWords.
    const k = wordsToBig(lookupWords, 0);
    return { value: this.values6[i]!, prefix: prefix6(k, wordsToBig(this.c.starts6, i * 4), wordsToBig(this.c.ends6, i * 4)) };
  }

  get size(): { v4: number; v6: number } {
    return { v4: this.c.starts4.length, v6: this.c.starts6.length / 4 };
  }
}

export class RangeTableBuilder<T> {
  private readonly v4 = new Stage4();
  private readonly v6 = new Stage6();
  private readonly values4: T[] = [];
  private readonly values6: T[] = [];

  addV4(first: number, last: number, value: T): this {
    this.v4.add(first, last);
    this.values4.push(value);
    return this;
  }

  addV6(first: bigint, last: bigint, value: T): this {
    this.v6.add(first, last);
    this.values6.push(value);
    return this;
  }

  build(): RangeTable<T> {
    const r4 = resolve(this.v4.view(), OPS4);
    const r6 = resolve(this.v6.view(), OPS6);
    const pick = (src: Uint32Array | null, values: T[]): T[] => (src ? Array.from(src, (i) => values[i]!) : values);
    return new RangeTable(compile(r4, r6), pick(r4.src, this.values4), pick(r6.src, this.values6));
  }
}
