// IP → autonomous system from @ip-location-db/asn (RouteViews + NRO + DB-IP
// names, CC BY 4.0). The package ships CSV only, so it is compiled into a
// RangeTable at start-up. The "-num" files are read because integer columns
// parse several times faster than address text.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Ip } from './address.js';
import { RangeTableBuilder, type RangeTable } from './ranges.js';

export interface AsnRecord {
  asn: number;
  org: string;
}

export interface AsnInfo extends AsnRecord {
  /** Largest CIDR around the address inside its routed range. */
  prefix: string;
}

export interface AsnDb {
  lookup(ip: Ip): AsnInfo | null;
  readonly stats: { v4Ranges: number; v6Ranges: number; asns: number; loadMs: number };
}

export function asnPackageDir(): string {
  return dirname(createRequire(import.meta.url).resolve('@ip-location-db/asn/package.json'));
}

/**
 * Calls row(start, c1, c2, c3, end) for each line "first,last,asn,org" of a
 * "-num" CSV with the byte offsets of the line and of its first three commas
 * (the org column may hold more, quoted). One pass over the bytes: decoding
 * the 21 MB file to a string costs half a second, and sliced org names would
 * keep that string alive. Returns the number of malformed lines.
 */
function eachRow(buf: Buffer, row: (start: number, c1: number, c2: number, c3: number, end: number) => void): number {
  let bad = 0;
  let start = 0;
  let c1 = -1;
  let c2 = -1;
  let c3 = -1;
  const n = buf.length;
  for (let i = 0; i <= n; i++) {
    const c = i < n ? buf[i]! : 10;
    if (c === 44) {
      if (c1 < 0) c1 = i;
      else if (c2 < 0) c2 = i;
      else if (c3 < 0) c3 = i;
    } else if (c === 10) {
      const end = i > start && buf[i - 1] === 13 ? i - 1 : i;
      if (end > start) {
        if (c1 > start && c2 > c1 + 1 && c3 > c2 + 1) row(start, c1, c2, c3, end);
        else bad++;
      }
      start = i + 1;
      c1 = c2 = c3 = -1;
    }
  }
  return bad;
}

/** The org column, unquoted when CSV-quoted (it is when the name holds a comma or quote). */
function orgText(buf: Buffer, start: number, end: number): string {
  if (end - start >= 2 && buf[start] === 34 && buf[end - 1] === 34) {
    return buf.toString('utf8', start + 1, end - 1).replaceAll('""', '"');
  }
  return buf.toString('utf8', start, end);
}

function decimal(buf: Buffer, from: number, to: number): number {
  let v = 0;
  for (let i = from; i < to; i++) {
    const d = buf[i]! - 48;
    if (d < 0 || d > 9) return NaN;
    v = v * 10 + d;
  }
  return v;
}

/** Reads asn-ipv4-num.csv and asn-ipv6-num.csv from dir (default: the installed package). */
export async function loadAsn(dir: string = asnPackageDir()): Promise<AsnDb> {
  const started = performance.now();
  const [buf4, buf6] = await Promise.all([readFile(join(dir, 'asn-ipv4-num.csv')), readFile(join(dir, 'asn-ipv6-num.csv'))]);
  const { table, asns } = compileTable(buf4, buf6, dir);
  const stats = { v4Ranges: table.size.v4, v6Ranges: table.size.v6, asns, loadMs: Math.round(performance.now() - started) };
  return {
    lookup(ip) {
      const m = table.match(ip);
      return m ? { asn: m.value.asn, org: m.value.org, prefix: m.prefix } : null;
    },
    stats,
  };
}

// A separate function so that the closures here, which hold the file
// buffers, share no scope with the long-lived lookup closure.
function compileTable(buf4: Buffer, buf6: Buffer, dir: string): { table: RangeTable<AsnRecord>; asns: number } {
  // One record per ASN, shared by its ranges (515k ranges, 91k ASNs). The
  // data names each ASN once; should a later version disagree with itself,
  // the first name seen is kept.
  const records = new Map<number, AsnRecord>();
  const record = (buf: Buffer, asn: number, org: number, orgEnd: number): AsnRecord => {
    let r = records.get(asn);
    if (!r) records.set(asn, (r = { asn, org: orgText(buf, org, orgEnd) }));
    return r;
  };
  const b = new RangeTableBuilder<AsnRecord>();
  let badValues = 0;
  const badLines =
    eachRow(buf4, (start, c1, c2, c3, end) => {
      const first = decimal(buf4, start, c1);
      const last = decimal(buf4, c1 + 1, c2);
      const asn = decimal(buf4, c2 + 1, c3);
      if (Number.isNaN(first + last + asn) || first > last || last > 0xffffffff) badValues++;
      else b.addV4(first, last, record(buf4, asn, c3 + 1, end));
    }) +
    eachRow(buf6, (start, c1, c2, c3, end) => {
      const asn = decimal(buf6, c2 + 1, c3);
      const first = buf6.toString('latin1', start, c1);
      const last = buf6.toString('latin1', c1 + 1, c2);
      if (Number.isNaN(asn) || !/^\d{1,39}$/.test(first) || !/^\d{1,39}$/.test(last)) badValues++;
      else b.addV6(BigInt(first), BigInt(last), record(buf6, asn, c3 + 1, end));
    });
  const bad = badLines + badValues;
  if (bad > 0) throw new Error(`ASN data in ${dir}: ${bad} malformed rows`);
  return { table: b.build(), asns: records.size };
}
