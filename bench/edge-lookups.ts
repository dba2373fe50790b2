// Cost of the ASN data alone: load time, the memory it holds, and µs per
// lookup for random public IPv4 and IPv6 addresses (parsed beforehand, as
// the edge stage parses once per request), then the category on top.
// Lookups are timed in CPU time, which other processes on a shared machine
// disturb far less than wall time.
//
//   node --expose-gc --import tsx bench/edge-lookups.ts [--lookups 500000] [--rounds 5]
import { parseArgs } from 'node:util';
import { loadAsn } from '../server/edge/asn.js';
import { classifyNetwork } from '../server/edge/asnCategory.js';
import { normalizeIp, type Ip } from '../server/edge/address.js';

const { values: args } = parseArgs({ options: { lookups: { type: 'string', default: '500000' }, rounds: { type: 'string', default: '5' } } });
const N = Number(args.lookups);
const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});
const MB = (n: number) => `${(n / 2 ** 20).toFixed(1)} MB`;
const usage = () => {
  gc();
  const m = process.memoryUsage();
  return { rss: m.rss, heap: m.heapUsed, buffers: m.arrayBuffers };
};

let x = 7;
const next = () => (x = (Math.imul(x, 1664525) + 1013904223) >>> 0);
const hex = () => (next() & 0xffff).toString(16);
const v4s: Ip[] = [];
const v6s: Ip[] = [];
while (v4s.length < 100_000) {
  const k = next();
  v4s.push(normalizeIp(`${k >>> 24}.${(k >>> 16) & 255}.${(k >>> 8) & 255}.${k & 255}`)!);
}
// Inside the registries' densest IPv6 blocks (2400::/12 APNIC, 2600::/12 ARIN, 2a00::/12 RIPE), so that most are routed.
const V6_BLOCKS = ['240', '260', '2a0'];
while (v6s.length < 100_000) v6s.push(normalizeIp(`${V6_BLOCKS[next() % 3]}${(next() & 15).toString(16)}:${hex()}:${hex()}::${hex()}`)!);

const before = usage();
const started = performance.now();
const asn = await loadAsn();
const loadMs = performance.now() - started;
const after = usage();
console.log(
  `ASN data: loaded in ${loadMs.toFixed(0)} ms (${asn.stats.v4Ranges} IPv4 and ${asn.stats.v6Ranges} IPv6 ranges, ${asn.stats.asns} ASNs); ` +
    `holds RSS +${MB(after.rss - before.rss)}, heap +${MB(after.heap - before.heap)}, buffers +${MB(after.buffers - before.buffers)}`,
);

function time(name: string, ips: Ip[], f: (ip: Ip) => unknown): void {
  const runs: number[] = [];
  let sink = 0;
  for (let r = 0; r < Number(args.rounds); r++) {
    const t = process.cpuUsage();
    for (let i = 0; i < N; i++) if (f(ips[i % ips.length]!) !== null) sink++;
    const used = process.cpuUsage(t);
    runs.push((used.user + used.system) / N);
  }
  runs.sort((a, b) => a - b);
  console.log(`  ${name.padEnd(34)} ${runs[runs.length >> 1]!.toFixed(3)} µs (median of ${runs.length}; best ${runs[0]!.toFixed(3)}), ${sink} answers`);
}

const none = { tor: false, vpn: false, cdn: false, datacenter: false };
console.log(`per lookup, ${N} lookups a round:`);
time('ASN lookup, IPv4', v4s, (ip) => asn.lookup(ip));
time('ASN lookup, IPv6', v6s, (ip) => asn.lookup(ip));
time('ASN lookup + category, IPv4', v4s, (ip) => classifyNetwork(asn.lookup(ip), none));
