// A MaxMind DB (https://maxmind.github.io/MaxMind-DB/) reader that keeps the
// file on disk: the readers on npm (maxmind, mmdb-lib) take the whole file
// as one Buffer, which for DB-IP's city data is 134 MB of every process's
// memory. Here the search tree and the data section are read at offsets in
// 4 KB pages, the most recently used of them kept (PAGES_CACHED per file),
// and decoded records are kept by their offset (RECORDS_CACHED), since many
// networks share one record. What stays in memory is bounded; the operating
// system's page cache holds the file for every process at once.
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { v4Key, v6Words, type Ip } from './address.js';

const PAGE = 4096;
/** Pages kept per file: the tree's upper levels and the commonest records stay, 8 MB at most. */
const PAGES_CACHED = 2048;
const RECORDS_CACHED = 4096;
const METADATA_MARKER = Buffer.from('\xab\xcd\xefMaxMind.com', 'latin1');
/** The metadata is within the last 128 KiB of the file. */
const METADATA_MAX = 128 * 1024;
const DATA_SEPARATOR = 16;

export type MmdbValue = string | number | bigint | boolean | Buffer | MmdbValue[] | { [key: string]: MmdbValue };

/** A map that forgets its least recently used entry beyond `cap`. */
class Lru<K, V> {
  private readonly map = new Map<K, V>();
  constructor(private readonly cap: number) {}
  get(k: K): V | undefined {
    const v = this.map.get(k);
    if (v !== undefined) {
      this.map.delete(k);
      this.map.set(k, v);
    }
    return v;
  }
  set(k: K, v: V): void {
    this.map.set(k, v);
    if (this.map.size > this.cap) this.map.delete(this.map.keys().next().value!);
  }
}

/** The file read in pages, the recently used ones kept. */
class PagedFile {
  private readonly pages = new Lru<number, Buffer>(PAGES_CACHED);
  readonly size: number;
  constructor(private readonly fd: number) {
    this.size = fstatSync(fd).size;
  }

  private page(n: number): Buffer {
    let p = this.pages.get(n);
    if (!p) {
      p = Buffer.allocUnsafeSlow(PAGE);
      const got = readSync(this.fd, p, 0, PAGE, n * PAGE);
      if (got < PAGE) p = p.subarray(0, got);
      this.pages.set(n, p);
    }
    return p;
  }

  byte(offset: number): number {
    const v = this.page(Math.floor(offset / PAGE))[offset % PAGE];
    if (v === undefined) throw new Error(`mmdb: offset ${offset} beyond the file`);
    return v;
  }

  /** Big-endian unsigned integer of `n` bytes (up to 6). */
  uint(offset: number, n: number): number {
    let v = 0;
    for (let i = 0; i < n; i++) v = v * 256 + this.byte(offset + i);
    return v;
  }

  bytes(offset: number, n: number): Buffer {
    const first = Math.floor(offset / PAGE);
    if (Math.floor((offset + n - 1) / PAGE) === first || n === 0) {
      const p = this.page(first);
      return p.subarray(offset % PAGE, (offset % PAGE) + n);
    }
    const out = Buffer.alloc(n);
    for (let i = 0; i < n;) {
      const p = this.page(Math.floor((offset + i) / PAGE));
      const at = (offset + i) % PAGE;
      const take = Math.min(n - i, p.length - at);
      if (take <= 0) throw new Error(`mmdb: offset ${offset + i} beyond the file`);
      p.copy(out, i, at, at + take);
      i += take;
    }
    return out;
  }
}

/** The data section's decoder (format 2.0): values at offsets relative to `base`. */
class Decoder {
  constructor(
    private readonly file: PagedFile,
    private readonly base: number,
  ) {}

  /** The value at `offset` (relative to the data section) and the offset after it. */
  decode(offset: number): [MmdbValue, number] {
    const f = this.file;
    const at = this.base + offset;
    const ctrl = f.byte(at);
    let type = ctrl >> 5;
    let next = at + 1;
    if (type === 1) {
      const ss = (ctrl >> 3) & 3;
      const low = ctrl & 7;
      const pointer =
        ss === 0
          ? low * 256 + f.byte(next)
          : ss === 1
            ? low * 65536 + f.uint(next, 2) + 2048
            : ss === 2
              ? low * 16777216 + f.uint(next, 3) + 526336
              : f.uint(next, 4);
      return [this.decode(pointer)[0], next + ss + 1 - this.base];
    }
    if (type === 0) type = 7 + f.byte(next++);
    let size = ctrl & 31;
    if (size === 29) size = 29 + f.byte(next++);
    else if (size === 30) [size, next] = [285 + f.uint(next, 2), next + 2];
    else if (size === 31) [size, next] = [65821 + f.uint(next, 3), next + 3];
    const end = next + size - this.base;
    switch (type) {
      case 2:
        return [f.bytes(next, size).toString('utf8'), end];
      case 3:
        return [f.bytes(next, 8).readDoubleBE(0), next + 8 - this.base];
      case 4:
        return [Buffer.from(f.bytes(next, size)), end];
      case 5:
      case 6:
        return [f.uint(next, size), end];
      case 7: {
        const map: { [key: string]: MmdbValue } = {};
        let o = next - this.base;
        for (let i = 0; i < size; i++) {
          const [key, afterKey] = this.decode(o);
          const [value, afterValue] = this.decode(afterKey);
          if (typeof key !== 'string') throw new Error(`mmdb: a map key at offset ${o} is not a string`);
          map[key] = value;
          o = afterValue;
        }
        return [map, o];
      }
      case 8:
        return [size === 0 ? 0 : f.bytes(next, size).readIntBE(0, size), end];
      case 9:
      case 10: {
        let v = 0n;
        for (const b of f.bytes(next, size)) v = v * 256n + BigInt(b);
        return [v, end];
      }
      case 11: {
        const list: MmdbValue[] = [];
        let o = next - this.base;
        for (let i = 0; i < size; i++) {
          const [value, after] = this.decode(o);
          list.push(value);
          o = after;
        }
        return [list, o];
      }
      case 14:
        return [size !== 0, next - this.base];
      case 15:
        return [f.bytes(next, 4).readFloatBE(0), next + 4 - this.base];
      default:
        throw new Error(`mmdb: data type ${type} at offset ${offset}`);
    }
  }
}

export interface MmdbMetadata {
  nodeCount: number;
  recordSize: number;
  ipVersion: number;
  buildEpoch: Date;
}

export class MmdbReader {
  readonly metadata: MmdbMetadata;
  private readonly file: PagedFile;
  private readonly decoder: Decoder;
  private readonly nodeBytes: number;
  private readonly ipv4Start: number;
  private readonly records = new Lru<number, MmdbValue>(RECORDS_CACHED);

  private constructor(fd: number) {
    this.file = new PagedFile(fd);
    const tail = Math.min(METADATA_MAX, this.file.size);
    const end = this.file.bytes(this.file.size - tail, tail);
    const marker = end.lastIndexOf(METADATA_MARKER);
    if (marker < 0) throw new Error('mmdb: no metadata marker');
    const metaStart = this.file.size - tail + marker + METADATA_MARKER.length;
    const meta = new Decoder(this.file, metaStart).decode(0)[0] as Record<string, MmdbValue>;
    this.metadata = {
      nodeCount: Number(meta.node_count),
      recordSize: Number(meta.record_size),
      ipVersion: Number(meta.ip_version),
      buildEpoch: new Date(Number(meta.build_epoch) * 1000),
    };
    if (![24, 28, 32].includes(this.metadata.recordSize)) throw new Error(`mmdb: record size ${this.metadata.recordSize}`);
    this.nodeBytes = this.metadata.recordSize / 4;
    this.decoder = new Decoder(this.file, this.metadata.nodeCount * this.nodeBytes + DATA_SEPARATOR);
    // IPv4 addresses in an IPv6 tree are ::a.b.c.d: 96 zero bits down the left.
    let node = 0;
    for (let i = 0; this.metadata.ipVersion === 6 && i < 96 && node < this.metadata.nodeCount; i++) node = this.record(node, 0);
    this.ipv4Start = node;
  }

  static open(path: string): MmdbReader {
    const fd = openSync(path, 'r');
    try {
      return new MmdbReader(fd);
    } catch (err) {
      closeSync(fd);
      throw err;
    }
  }

  /** The left (0) or right (1) record of a node. */
  private record(node: number, bit: number): number {
    const at = node * this.nodeBytes;
    const f = this.file;
    switch (this.metadata.recordSize) {
      case 24:
        return f.uint(at + bit * 3, 3);
      case 28:
        return bit ? (f.byte(at + 3) & 0x0f) * 2 ** 24 + f.uint(at + 4, 3) : ((f.byte(at + 3) & 0xf0) >> 4) * 2 ** 24 + f.uint(at, 3);
      default:
        return f.uint(at + bit * 4, 4);
    }
  }

  /** The record of the network holding the address; null when none. */
  get(ip: Ip): MmdbValue | null {
    const words = new Uint32Array(4);
    if (ip.version === 4) words[0] = v4Key(ip.address);
    else if (!v6Words(ip.address, words)) return null;
    const { nodeCount } = this.metadata;
    let node = ip.version === 4 ? this.ipv4Start : 0;
    for (let depth = 0; depth < (ip.version === 4 ? 32 : 128) && node < nodeCount; depth++) {
      node = this.record(node, (words[depth >> 5]! >>> (31 - (depth & 31))) & 1);
    }
    if (node <= nodeCount) return null;
    const offset = node - nodeCount - DATA_SEPARATOR;
    let value = this.records.get(offset);
    if (value === undefined) {
      value = this.decoder.decode(offset)[0];
      this.records.set(offset, value);
    }
    return value;
  }
}
