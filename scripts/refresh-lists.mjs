#!/usr/bin/env node
// Downloads the public IP lists that server/edge/lists.ts reads into
// DATA_DIR/lists (or --dir). Plain Node 20, no dependencies, safe to run from
// cron while the server runs: each file is written to a dot-file in the same
// directory and renamed over the old one, so the server never reads half a
// list, and a failed or implausible download keeps the previous file.
//
//   node scripts/refresh-lists.mjs [--dir DIR] [--source FILE=URL ...]
//
// --source replaces the default set (e.g. to use a mirror); repeat it per file.
// Exit code 1 when any list failed.
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const X4B = 'https://raw.githubusercontent.com/X4BNet/lists_vpn/main';

/** file: name in the lists directory (its prefix picks the list kind); minEntries guards against truncated or error pages. */
export const DEFAULT_SOURCES = [
  { file: 'tor-exits.txt', url: 'https://check.torproject.org/torbulkexitlist', minEntries: 100 },
  {
    file: 'blocklist-firehol-level1.netset',
    url: 'https://raw.githubusercontent.com/firehol/blocklist-ipsets/master/firehol_level1.netset',
    minEntries: 1000,
  },
  { file: 'datacenter-x4bnet-ipv4.txt', url: `${X4B}/output/datacenter/ipv4.txt`, minEntries: 1000 },
  { file: 'datacenter-x4bnet-ipv6.txt', url: `${X4B}/output/datacenter/ipv6.txt`, minEntries: 1 },
  { file: 'vpn-x4bnet-ipv4.txt', url: `${X4B}/output/vpn/ipv4.txt`, minEntries: 100 },
  { file: 'vpn-x4bnet-ipv6.txt', url: `${X4B}/output/vpn/ipv6.txt`, minEntries: 1 },
  // The autonomous systems those ranges come from ("AS14061 # DigitalOcean"): they categorise the whole network.
  { file: 'datacenter-x4bnet-asn.txt', url: `${X4B}/input/datacenter/ASN.txt`, minEntries: 100 },
  { file: 'vpn-x4bnet-asn.txt', url: `${X4B}/input/vpn/ASN.txt`, minEntries: 5 },
];

const MAX_BYTES = 64 * 1024 * 1024;
const ENTRY = /^([0-9A-Fa-f:.]+(\/\d{1,3})?|AS\d{1,10})$/i;
const TOR_KEYWORDS = new Set(['ExitNode', 'Published', 'LastStatus']);

/**
 * Counts list entries and junk lines with the same line rules as the
 * server's parser. A proxy's HTML error page or a captive portal gives junk.
 */
export function checkList(text) {
  let entries = 0;
  let junk = 0;
  for (const raw of text.split('\n')) {
    const line = raw.replace(/[#;].*$/, '').trim();
    if (line === '') continue;
    const tokens = line.split(/\s+/);
    if (TOR_KEYWORDS.has(tokens[0])) continue;
    const token = tokens[0] === 'ExitAddress' ? (tokens[1] ?? '') : tokens[0];
    if (ENTRY.test(token)) entries++;
    else junk++;
  }
  return { entries, junk };
}

async function download(source, fetchImpl, timeoutMs) {
  const res = await fetchImpl(source.url, {
    signal: AbortSignal.timeout(timeoutMs),
    headers: { 'user-agent': 'deviceid-refresh-lists/1' },
    redirect: 'follow',
  });
  if (!res.ok) throw new Error(`HTTP ${res.status}`);
  const declared = Number(res.headers.get('content-length') ?? 0);
  if (declared > MAX_BYTES) throw new Error(`too large (${declared} bytes)`);
  const body = Buffer.from(await res.arrayBuffer());
  if (body.length > MAX_BYTES) throw new Error(`too large (${body.length} bytes)`);
  return body;
}

/**
 * Fetches every source into dir. Returns one result per source:
 * { file, ok: true, entries } or { file, ok: false, error }.
 */
export async function refreshLists({ dir, sources = DEFAULT_SOURCES, fetch: fetchImpl = globalThis.fetch, timeoutMs = 60_000 }) {
  await mkdir(dir, { recursive: true });
  const results = [];
  for (const source of sources) {
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(source.file)) {
      results.push({ file: source.file, ok: false, error: 'file name must be a plain name' });
      continue;
    }
    const tmp = join(dir, `.${source.file}.${process.pid}.${Date.now()}.tmp`);
    try {
      const body = await download(source, fetchImpl, timeoutMs);
      const { entries, junk } = checkList(body.toString('utf8'));
      const minEntries = source.minEntries ?? 1;
      if (entries < minEntries) throw new Error(`only ${entries} entries (expected at least ${minEntries})`);
      if (junk > entries / 10) throw new Error(`${junk} lines are not addresses: not a list`);
      await writeFile(tmp, body, { mode: 0o644 });
      await rename(tmp, join(dir, source.file));
      results.push({ file: source.file, ok: true, entries });
    } catch (err) {
      await rm(tmp, { force: true });
      results.push({ file: source.file, ok: false, error: err instanceof Error ? err.message : String(err) });
    }
  }
  return results;
}

function parseArgs(argv, env) {
  let dir = join(resolve(env.DATA_DIR || './.data'), 'lists');
  const sources = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--dir' && argv[i + 1]) dir = resolve(argv[++i]);
    else if (arg === '--source' && argv[i + 1]) {
      const spec = argv[++i];
      const eq = spec.indexOf('=');
      if (eq < 1) throw new Error(`--source wants FILE=URL, got "${spec}"`);
      const file = spec.slice(0, eq);
      const known = DEFAULT_SOURCES.find((s) => s.file === file);
      sources.push({ file, url: spec.slice(eq + 1), minEntries: known?.minEntries ?? 1 });
    } else throw new Error(`unknown argument "${arg}"`);
  }
  return { dir, sources: sources.length > 0 ? sources : DEFAULT_SOURCES };
}

async function main() {
  let args;
  try {
    args = parseArgs(process.argv.slice(2), process.env);
  } catch (err) {
    console.error(err.message);
    console.error('usage: node scripts/refresh-lists.mjs [--dir DIR] [--source FILE=URL ...]');
    process.exit(2);
  }
  const results = await refreshLists(args);
  for (const r of results) {
    console.log(r.ok ? `ok     ${r.file}: ${r.entries} entries` : `FAILED ${r.file}: ${r.error} (previous file kept)`);
  }
  process.exit(results.every((r) => r.ok) ? 0 : 1);
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) await main();
