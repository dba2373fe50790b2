// IP lists the operator drops into a directory (default DATA_DIR/lists;
// scripts/refresh-lists.mjs fills it): Tor exits, blocklists, datacenter,
// VPN and proxy ranges, and datacenter and VPN autonomous systems. No npm or
// Debian package ships current lists, so a missing file is normal and means
// "no such list", which status() reports. Files are re-read when their mtime
// or size changes; lookups stay sync.
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { normalizeIp, type Ip } from './address.js';
import { RangeSet, RangeSetBuilder } from './ranges.js';

export const LIST_KINDS = ['tor', 'blocklist', 'datacenter', 'vpn', 'proxy'] as const;
export type ListKind = (typeof LIST_KINDS)[number];

/**
 * Which list a file feeds, by name: tor-exits.txt (any tor-*.txt),
 * blocklist*.txt or any *.netset (FireHOL), datacenter*, vpn*, proxy*
 * (.txt or .netset). Dot-files are skipped: refresh-lists writes its
 * temporary files that way.
 */
export function listKindOf(fileName: string): ListKind | null {
  const m = /^(tor|blocklist|datacenter|vpn|proxy)[^/]*\.(txt|netset)$/i.exec(fileName);
  if (m) return m[1]!.toLowerCase() as ListKind;
  return /^[^.][^/]*\.netset$/i.test(fileName) ? 'blocklist' : null;
}

const TOR_KEYWORDS = new Set(['ExitNode', 'Published', 'LastStatus']);

/** Kinds whose lists may also name autonomous systems ("AS16509"): the category of a whole network. */
const ASN_KINDS: ReadonlySet<ListKind> = new Set(['datacenter', 'vpn']);
const AS_NUMBER = /^AS(\d{1,10})$/i;

/**
 * Parses one list file: one address or CIDR per line; '#' and ';' start
 * comments (FireHOL, Spamhaus); the Tor exit-addresses format
 * ("ExitAddress <ip> <date>") and "ip:port" proxy lines are understood, and
 * with `asns` so are AS numbers ("AS9009"). Lines that are none of these are
 * counted as rejected, never guessed at.
 */
export function parseList(text: string, into: RangeSetBuilder, asns?: Set<number>): { entries: number; rejected: number } {
  let entries = 0;
  let rejected = 0;
  for (const rawLine of text.split('\n')) {
    const line = rawLine.replace(/[#;].*$/, '').trim();
    if (line === '') continue;
    const tokens = line.split(/\s+/);
    let token = tokens[0]!;
    if (token === 'ExitAddress') token = tokens[1] ?? '';
    else if (TOR_KEYWORDS.has(token)) continue;
    if (into.add(token)) {
      entries++;
      continue;
    }
    const as = asns && AS_NUMBER.exec(token);
    if (as && Number(as[1]) <= 0xffffffff) {
      asns.add(Number(as[1]));
      entries++;
      continue;
    }
    const ip = normalizeIp(token);
    if (ip && into.add(ip.address)) entries++;
    else rejected++;
  }
  return { entries, rejected };
}

export interface ListFileStatus {
  name: string;
  entries: number;
  rejected: number;
  mtime: Date;
}

export interface ListStatus {
  files: ListFileStatus[];
  ranges: { v4: number; v6: number };
  /** Autonomous systems listed (datacenter and VPN lists only). */
  asns: number;
  loadedAt: Date;
}

export interface ListHits {
  tor: boolean;
  blocklist: boolean;
  datacenter: boolean;
  vpn: boolean;
  proxy: boolean;
  /** Cloudflare's published ranges (cloudflare-ip package), always loaded. */
  cdn: boolean;
}

/** The AS is listed as a datacenter or VPN network as a whole. */
export interface AsnListHits {
  datacenter: boolean;
  vpn: boolean;
}

export interface IpLists {
  check(ip: Ip): ListHits;
  checkAsn(asn: number | null): AsnListHits;
  /** Per kind, null when no file is configured (e.g. "no Tor list configured"). */
  status(): Record<ListKind, ListStatus | null>;
  /** Re-reads changed files now; the poll calls this too. */
  refresh(): Promise<void>;
  close(): void;
}

export interface ListOptions {
  dir: string;
  /** How often to look for changed files; default 60 s. */
  pollMs?: number;
  /** A directory or file that cannot be read keeps the previous sets; this hears about it. */
  onError?: (err: Error) => void;
  onReload?: (kind: ListKind, status: ListStatus | null) => void;
}

function cloudflareRanges(): RangeSet {
  const file = createRequire(import.meta.url).resolve('cloudflare-ip/ips.json');
  const cidrs = JSON.parse(readFileSync(file, 'utf8')) as string[];
  return RangeSet.fromCidrs(cidrs).set;
}

interface Loaded {
  set: RangeSet;
  asns: ReadonlySet<number>;
  status: ListStatus;
  /** name → "mtimeMs:size" as read, to notice changes. */
  signature: string;
}

export async function loadLists(opts: ListOptions): Promise<IpLists> {
  const cdn = cloudflareRanges();
  const loaded = new Map<ListKind, Loaded>();
  const report = (err: unknown): void => opts.onError?.(err instanceof Error ? err : new Error(String(err)));

  async function scan(): Promise<void> {
    let names: string[];
    try {
      names = await readdir(opts.dir);
    } catch (err) {
      // No directory means no lists; any other failure keeps what is loaded.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') return report(err);
      names = [];
    }
    const byKind = new Map<ListKind, { name: string; mtimeMs: number; size: number }[]>();
    for (const name of names.sort()) {
      const kind = listKindOf(name);
      if (!kind) continue;
      try {
        const st = await stat(join(opts.dir, name));
        if (!st.isFile()) continue;
        let files = byKind.get(kind);
        if (!files) byKind.set(kind, (files = []));
        files.push({ name, mtimeMs: st.mtimeMs, size: st.size });
      } catch (err) {
        // Vanished between readdir and stat: it will be gone or back next time.
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') report(err);
      }
    }
    for (const kind of LIST_KINDS) {
      const files = byKind.get(kind) ?? [];
      const signature = files.map((f) => `${f.name}:${f.mtimeMs}:${f.size}`).join('|');
      const before = loaded.get(kind);
      if ((before?.signature ?? '') === signature) continue;
      if (files.length === 0) {
        loaded.delete(kind);
        opts.onReload?.(kind, null);
        continue;
      }
      try {
        const builder = new RangeSetBuilder();
        const asns = ASN_KINDS.has(kind) ? new Set<number>() : undefined;
        const fileStatus: ListFileStatus[] = [];
        for (const f of files) {
          const { entries, rejected } = parseList(await readFile(join(opts.dir, f.name), 'utf8'), builder, asns);
          fileStatus.push({ name: f.name, entries, rejected, mtime: new Date(f.mtimeMs) });
        }
        const set = builder.build();
        const status = { files: fileStatus, ranges: set.size, asns: asns?.size ?? 0, loadedAt: new Date() };
        loaded.set(kind, { set, asns: asns ?? new Set(), status, signature });
        opts.onReload?.(kind, status);
      } catch (err) {
        report(err);
      }
    }
  }

  // Scans run one after another; each refresh() gets a scan that starts after
  // the call. The poll skips a tick while one is still queued or running.
  let queue = Promise.resolve();
  let pending = 0;
  const refresh = (): Promise<void> => {
    pending++;
    queue = queue
      .then(scan)
      .catch(report)
      .finally(() => {
        pending--;
      });
    return queue;
  };

  await refresh();
  const timer = setInterval(() => {
    if (pending === 0) void refresh();
  }, opts.pollMs ?? 60_000);
  timer.unref();

  const has = (kind: ListKind, ip: Ip): boolean => loaded.get(kind)?.set.has(ip) ?? false;
  const listsAsn = (kind: ListKind, asn: number | null): boolean => asn !== null && (loaded.get(kind)?.asns.has(asn) ?? false);
  return {
    check(ip) {
      return {
        tor: has('tor', ip),
        blocklist: has('blocklist', ip),
        datacenter: has('datacenter', ip),
        vpn: has('vpn', ip),
        proxy: has('proxy', ip),
        cdn: cdn.has(ip),
      };
    },
    checkAsn(asn) {
      return { datacenter: listsAsn('datacenter', asn), vpn: listsAsn('vpn', asn) };
    },
    status() {
      const out = {} as Record<ListKind, ListStatus | null>;
      for (const kind of LIST_KINDS) out[kind] = loaded.get(kind)?.status ?? null;
      return out;
    },
    refresh,
    close() {
      clearInterval(timer);
    },
  };
}
