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
//
// It also refreshes the crawler IP ranges that server/bots/verify.ts checks
// named bots against, from their operators' published files, into DIR/bots
// as <list>.json ({ source, date, prefixes }: the form server/bots/data ships;
// BotNames' dataDir). A bot list's --source is its list name, repeated for a
// list made of several files: --source gptbot=URL, --source pingdom=URL4
// --source pingdom=URL6.
import { isIP } from 'node:net';
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

const GOOGLE = 'https://developers.google.com/static/crawling/ipranges';

/**
 * The crawler range lists server/bots/catalog.ts verifies by, at their operators' addresses. Google and Bing
 * publish { creationTime, prefixes: [{ ipv4Prefix } | { ipv6Prefix }] }, as do OpenAI, Apple, Perplexity,
 * Anthropic, DuckDuckGo and Common Crawl; Ahrefs { ips: [{ ip_address }] }; UptimeRobot and Pingdom plain text.
 * Meta documents the routes of its AS32934, which RIPEstat serves as { data: { prefixes: [{ prefix }] } }.
 * X publishes no file (its three ranges are on a help page): twitterbot is shipped only.
 */
export const BOT_SOURCES = [
  { list: 'googlebot', urls: [`${GOOGLE}/common-crawlers.json`], minEntries: 50 },
  { list: 'google-special-crawlers', urls: [`${GOOGLE}/special-crawlers.json`], minEntries: 20 },
  { list: 'google-user-triggered-fetchers', urls: [`${GOOGLE}/user-triggered-fetchers.json`, `${GOOGLE}/user-triggered-fetchers-google.json`], minEntries: 50 },
  { list: 'bingbot', urls: ['https://www.bing.com/toolbox/bingbot.json'], minEntries: 5 },
  { list: 'applebot', urls: ['https://search.developer.apple.com/applebot.json'], minEntries: 3 },
  { list: 'duckduckbot', urls: ['https://duckduckgo.com/duckduckbot.json'], minEntries: 10 },
  { list: 'gptbot', urls: ['https://openai.com/gptbot.json'], minEntries: 3 },
  { list: 'chatgpt-user', urls: ['https://openai.com/chatgpt-user.json'], minEntries: 3 },
  { list: 'oai-searchbot', urls: ['https://openai.com/searchbot.json'], minEntries: 3 },
  { list: 'claudebot', urls: ['https://claude.com/crawling/bots.json'], minEntries: 3 },
  { list: 'perplexitybot', urls: ['https://www.perplexity.ai/perplexitybot.json'], minEntries: 2 },
  { list: 'perplexity-user', urls: ['https://www.perplexity.ai/perplexity-user.json'], minEntries: 1 },
  { list: 'ccbot', urls: ['https://index.commoncrawl.org/ccbot.json'], minEntries: 1 },
  { list: 'ahrefsbot', urls: ['https://api.ahrefs.com/v3/public/crawler-ips'], minEntries: 100 },
  { list: 'meta', urls: ['https://stat.ripe.net/data/announced-prefixes/data.json?resource=AS32934'], minEntries: 50 },
  { list: 'uptimerobot', urls: ['https://uptimerobot.com/inc/files/ips/IPv4andIPv6.txt'], minEntries: 20 },
  { list: 'pingdom', urls: ['https://my.pingdom.com/probes/ipv4', 'https://my.pingdom.com/probes/ipv6'], minEntries: 20 },
];

/** Prefixes wider than these would vouch for whole providers' networks: no operator publishes one for a crawler. */
const WIDEST = { 4: 8, 6: 16 };
const PREFIX_KEYS = new Set(['ipv4Prefix', 'ipv6Prefix', 'ip_address', 'prefix', 'ip', 'cidr']);

/** A CIDR or bare address in canonical-enough form, or null. Bare addresses become /32 or /128. */
export function checkCidr(text) {
  const [addr, len, extra] = String(text).trim().split('/');
  const family = isIP(addr ?? '');
  if (family === 0 || extra !== undefined) return null;
  const max = family === 4 ? 32 : 128;
  if (len !== undefined && !/^\d{1,3}$/.test(len)) return null;
  const bits = len === undefined ? max : Number(len);
  if (bits > max || bits < WIDEST[family]) return null;
  return `${addr.toLowerCase()}/${bits}`;
}

/**
 * The prefixes of one downloaded bot list: a JSON document's ipv4Prefix/ipv6Prefix/ip_address/prefix values
 * wherever they are, or a text file's lines. Returns { prefixes, junk, created } (created: the JSON's creationTime).
 */
export function parseBotList(text) {
  const found = [];
  let created = null;
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  if (json !== undefined && typeof json === 'object' && json !== null) {
    const walk = (v) => {
      if (Array.isArray(v)) v.forEach(walk);
      else if (v && typeof v === 'object') {
        for (const [k, x] of Object.entries(v)) {
          if (PREFIX_KEYS.has(k) && typeof x === 'string') found.push(x);
          else if (k === 'creationTime' && typeof x === 'string') created = x;
          else walk(x);
        }
      }
    };
    walk(json);
  } else {
    for (const raw of text.split('\n')) {
      const line = raw.replace(/#.*$/, '').trim();
      if (line !== '') found.push(line);
    }
  }
  const prefixes = [];
  let junk = 0;
  for (const f of found) {
    const c = checkCidr(f);
    if (c) prefixes.push(c);
    else junk++;
  }
  return { prefixes: [...new Set(prefixes)], junk, created };
}

/**
 * Fetches every bot list into dir (BotNames' dataDir) as <list>.json. All of a list's URLs must answer and every
 * entry must be a CIDR or address: a list is replaced whole or not at all. Returns one result per list:
 * { file, ok: true, entries } or { file, ok: false, error }.
 */
export async function refreshBotLists({ dir, sources = BOT_SOURCES, fetch: fetchImpl = globalThis.fetch, timeoutMs = 60_000, now = () => new Date() }) {
  await mkdir(dir, { recursive: true });
  const results = [];
  for (const source of sources) {
    const file = `${source.list}.json`;
    if (!/^[a-z0-9][a-z0-9-]*$/.test(source.list)) {
      results.push({ file, ok: false, error: 'list name must be a plain name' });
      continue;
    }
    const tmp = join(dir, `.${file}.${process.pid}.${Date.now()}.tmp`);
    try {
      const prefixes = [];
      const created = [];
      for (const url of source.urls) {
        const parsed = parseBotList((await download({ url }, fetchImpl, timeoutMs)).toString('utf8'));
        if (parsed.junk > 0) throw new Error(`${parsed.junk} entries of ${url} are not CIDRs (or are implausibly wide)`);
        if (parsed.prefixes.length === 0) throw new Error(`no prefixes in ${url}`);
        prefixes.push(...parsed.prefixes);
        if (parsed.created) created.push(parsed.created);
      }
      const unique = [...new Set(prefixes)];
      const minEntries = source.minEntries ?? 1;
      if (unique.length < minEntries) throw new Error(`only ${unique.length} prefixes (expected at least ${minEntries})`);
      const date = now().toISOString().slice(0, 10);
      const body = {
        source: `${source.urls.join(' and ')}, downloaded ${date}${created.length > 0 ? ` (creationTime ${created.join(', ')})` : ''}`,
        date,
        prefixes: unique,
      };
      await writeFile(tmp, JSON.stringify(body) + '\n', { mode: 0o644 });
      await rename(tmp, join(dir, file));
      results.push({ file, ok: true, entries: unique.length });
    } catch (err) {
      await rm(tmp, { force: true });
      results.push({ file, ok: false, error: err instanceof Error ? err.message : String(err) });
    }
  }
  return results;
}

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
  const bots = new Map();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--dir' && argv[i + 1]) dir = resolve(argv[++i]);
    else if (arg === '--source' && argv[i + 1]) {
      const spec = argv[++i];
      const eq = spec.indexOf('=');
      if (eq < 1) throw new Error(`--source wants FILE=URL, got "${spec}"`);
      const file = spec.slice(0, eq);
      const url = spec.slice(eq + 1);
      const bot = BOT_SOURCES.find((s) => s.list === file || `${s.list}.json` === file);
      if (bot) bots.set(bot.list, { ...bot, urls: [...(bots.get(bot.list)?.urls ?? []), url] });
      else {
        const known = DEFAULT_SOURCES.find((s) => s.file === file);
        sources.push({ file, url, minEntries: known?.minEntries ?? 1 });
      }
    } else throw new Error(`unknown argument "${arg}"`);
  }
  const chosen = sources.length > 0 || bots.size > 0;
  return { dir, sources: chosen ? sources : DEFAULT_SOURCES, botSources: chosen ? [...bots.values()] : BOT_SOURCES };
}

async function main() {
  let args;
  try {
    args = parseArgs(process.argv.slice(2), process.env);
  } catch (err) {
    console.error(err.message);
    console.error('usage: node scripts/refresh-lists.mjs [--dir DIR] [--source FILE=URL ...]  (a bot list: --source LIST=URL, written to DIR/bots/LIST.json)');
    process.exit(2);
  }
  const results = [
    ...(args.sources.length > 0 ? await refreshLists(args) : []),
    ...(args.botSources.length > 0 ? await refreshBotLists({ dir: join(args.dir, 'bots'), sources: args.botSources }) : []),
  ];
  for (const r of results) {
    console.log(r.ok ? `ok     ${r.file}: ${r.entries} entries` : `FAILED ${r.file}: ${r.error} (previous file kept)`);
  }
  process.exit(results.every((r) => r.ok) ? 0 : 1);
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) await main();
