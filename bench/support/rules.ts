// The 100 realistic rules of the rules benchmarks (bench/rules.ts in
// process, bench/http.ts --rules through the API) and the lists they name.
import type { RuleInput } from '../../server/decisions/engine.js';

/** 100 rules from ten families, each with its own constants; few match an event. */
export function benchRules(): RuleInput[] {
  const t: ((k: number) => string)[] = [
    (k) => `verdicts.bot.result && verdicts.bot.kind == 'bad' && suspectScore > ${60 + k}`,
    (k) => `suspectScore >= ${90 + (k % 10)} || botProbability > 0.9${k % 10}`,
    (k) => `inList('blocked_countries_${k}', ipLocation.country) && !linkedIdVouched`,
    (k) => `inList('blocked_asns_${k}', ipLocation.asn) || inList('blocked_ips_${k}', ip)`,
    (k) => `cidr(ip, '${10 + k}.0.0.0/8') && ipLocation.networkCategory == 'DATACENTER'`,
    (k) => `velocity.events.h1 > ${200 + k} || velocity.distinctIp.h24 > ${50 + k} || velocity.distinctCountry.h1 > ${5 + (k % 5)}`,
    (k) => `has(tag.plan) && tag.plan == 'enterprise${k}' && tag.cartTotal > ${1000 + k}`,
    (k) => `urlPath.startsWith('/admin${k}') && !inList('staff', visitorId)`,
    (k) => `userAgent.matches('(?i)(python-requests|curl|wget|scrapy|bot${k})/')`,
    (k) =>
      `(verdicts.vpn.result && verdicts.vpn.confidence > 0.99 && ipLocation.country in ['KP', 'IR', 'SY', 'C${k % 10}']) || ('TOR_EXIT_NODE' in riskFactors && newVisitor && browser.major < ${40 + k})`,
  ];
  return Array.from({ length: 100 }, (_, i) => ({
    id: `rule_${i}`,
    expression: t[i % t.length]!(Math.floor(i / t.length)),
    action: 'block' as const,
    enabled: true,
    // Every tenth a test rule: they run whatever decides.
    mode: i % 10 === 9 ? ('test' as const) : ('live' as const),
  }));
}

/** The lists the rules name, with their kind and entries ('staff' holds a visitorId the benchmarks' events never have). */
export const BENCH_LISTS: ReadonlyArray<{ name: string; kind: 'visitorId' | 'country' | 'asn' | 'ip'; values: (string | number)[] }> = [
  { name: 'staff', kind: 'visitorId', values: ['iq_01JD0S3V6ZQ8Y0K2W3ZP4X5Y6Z'] },
  ...Array.from({ length: 10 }, (_, k) => ({ name: `blocked_countries_${k}`, kind: 'country' as const, values: ['KP', 'IR'] })),
  ...Array.from({ length: 10 }, (_, k) => ({ name: `blocked_asns_${k}`, kind: 'asn' as const, values: [64496 + k] })),
  ...Array.from({ length: 10 }, (_, k) => ({ name: `blocked_ips_${k}`, kind: 'ip' as const, values: [`192.0.2.${k}`] })),
];
