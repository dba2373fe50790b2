// Spec 2.7 network categories. No package ships an ASN → type map, so the
// category of an AS comes from the curated table (data/networks.json, and
// the mobile-only ASes of data/mobile-carriers.json), then from the
// datacenter and VPN AS lists an operator keeps in LISTS_DIR (lists.ts),
// then from rules over the organisation name.
// Both are heuristics: a category says what kind of network an address
// belongs to, never what the person behind it is doing.
import { ASN_CATEGORIES } from '../../contract/edge.js';
import { CURATED_NETWORKS, MOBILE_CARRIERS, type NetworkGroup } from './curated.js';

export type AsnCategory = (typeof ASN_CATEGORIES)[number];

export interface KnownNetworkGroup extends Omit<NetworkGroup, 'category'> {
  category: AsnCategory;
}

export const KNOWN_NETWORKS: readonly KnownNetworkGroup[] = [
  ...CURATED_NETWORKS,
  {
    category: 'MOBILE_CARRIER',
    why: "Mobile operators' own radio networks (the ASes of data/mobile-carriers.json carrying mostly mobile subscribers): addresses are shared by many phones through carrier NAT and change often.",
    networks: MOBILE_CARRIERS.filter((c) => c.mobileOnly).map((c) => ({ asn: c.asn, name: `${c.operator} (${c.country})` })),
  },
];

const BY_ASN = new Map<number, AsnCategory>();
for (const g of KNOWN_NETWORKS) for (const n of g.networks) BY_ASN.set(n.asn, g.category);

/** Organisation-name rules, first match wins; order puts the narrower meanings first. */
const RULES: { category: AsnCategory; pattern: RegExp }[] = [
  // Before education, so that a ministry of education counts as government.
  {
    category: 'GOVERNMENT',
    pattern:
      /\b(government|ministry|ministerio|minist[eè]re|ministerium|bundesamt|department of defen[cs]e|city of|county of|municipality|gouvernement|gobierno|governo|regierung)\b/i,
  },
  {
    category: 'EDUCATION',
    pattern:
      /\b(universit\w*|universidad\w*|universidade\w*|università|college|hochschule|polytechnic|school|academy|research and education|education(al)? network)\b/i,
  },
  { category: 'VPN_COMMERCIAL', pattern: /\bvpn\b/i },
  { category: 'CDN', pattern: /\b(cdn|content delivery)\b/i },
  { category: 'DATACENTER', pattern: /hosting|server|\bcloud|data ?cent(er|re)|colocation|\bvps\b|dedicated/i },
  { category: 'MOBILE_CARRIER', pattern: /mobile|wireless|cellular|\blte\b|\bmovil\b|\bmóvil\b|\bmobilfunk\b/i },
  {
    category: 'RESIDENTIAL_ISP',
    pattern:
      /\b(isp|telecoms?|telekom\w*|telecommunications?|telecomunica\w*|telekomunika\w*|broadband|cable|fib(er|re)|dsl|internet service provider|provedor)\b/i,
  },
];

export type CategorySource = 'list' | 'asn' | 'asn-list' | 'org' | 'none';

/** Whether the AS lists (lists.ts) name this AS as a datacenter or VPN network. */
export interface AsnListFacts {
  datacenter: boolean;
  vpn: boolean;
}
const NOT_LISTED: AsnListFacts = { datacenter: false, vpn: false };

/**
 * Category of an autonomous system: the curated table, then the AS lists
 * (public lists are broad; the table's narrower judgement wins), then the
 * name rules, else UNKNOWN.
 */
export function categorizeAsn(asn: number | null, org: string, listed: AsnListFacts = NOT_LISTED): { category: AsnCategory; source: CategorySource } {
  const known = asn === null ? undefined : BY_ASN.get(asn);
  if (known) return { category: known, source: 'asn' };
  if (listed.vpn) return { category: 'VPN_COMMERCIAL', source: 'asn-list' };
  if (listed.datacenter) return { category: 'DATACENTER', source: 'asn-list' };
  let byName = nameCache.get(org);
  if (byName === undefined) {
    byName = RULES.find((rule) => rule.pattern.test(org))?.category ?? null;
    nameCache.set(org, byName);
  }
  return byName ? { category: byName, source: 'org' } : { category: 'UNKNOWN', source: 'none' };
}

// Seven regexes per request add up; names come from the ASN data (about 91k), so the cache stays bounded.
const nameCache = new Map<string, AsnCategory | null>();

/** Per-address facts from the IP lists (see lists.ts). */
export interface ListFacts {
  tor: boolean;
  vpn: boolean;
  cdn: boolean;
  datacenter: boolean;
}

const HOSTED: ReadonlySet<AsnCategory> = new Set(['DATACENTER', 'CDN', 'VPN_COMMERCIAL', 'TOR_EXIT']);

export interface NetworkClass {
  category: AsnCategory;
  /** The address is in hosting space: a datacenter, CDN edge, VPN or Tor exit server. */
  isDatacenter: boolean;
  source: CategorySource;
}

/**
 * Category for one address. A list entry is about that very address, so it
 * outranks what its ASN suggests: Tor, then VPN, then CDN, then datacenter
 * (which keeps an ASN's more specific hosting category). A Tor exit alone does
 * not make an address a datacenter: exits also run on home lines.
 */
export function classifyNetwork(asn: { asn: number | null; org: string } | null, lists: ListFacts, listed: AsnListFacts = NOT_LISTED): NetworkClass {
  const byAsn = asn ? categorizeAsn(asn.asn, asn.org, listed) : { category: 'UNKNOWN' as const, source: 'none' as const };
  const hostedAsn = HOSTED.has(byAsn.category);
  const isDatacenter = hostedAsn || lists.datacenter || lists.vpn || lists.cdn;
  if (lists.tor) return { category: 'TOR_EXIT', isDatacenter: hostedAsn || lists.datacenter, source: 'list' };
  if (lists.vpn) return { category: 'VPN_COMMERCIAL', isDatacenter, source: 'list' };
  if (lists.cdn) return { category: 'CDN', isDatacenter, source: 'list' };
  if (lists.datacenter && !hostedAsn) return { category: 'DATACENTER', isDatacenter, source: 'list' };
  return { ...byAsn, isDatacenter };
}
