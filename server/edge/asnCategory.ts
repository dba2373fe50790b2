// Spec 2.7 network categories. No package ships an ASN → type map, so this is
// a curated table of well-known networks (each number checked against the
// names in @ip-location-db/asn; mobile operators come from mobileCarriers.ts)
// backed by rules over the organisation name.
// Both are heuristics: a category says what kind of network an address
// belongs to, never what the person behind it is doing.
import { ASN_CATEGORIES } from '../../contract/edge.js';
import { MOBILE_CARRIERS } from './mobileCarriers.js';

export type AsnCategory = (typeof ASN_CATEGORIES)[number];

export interface KnownNetworkGroup {
  category: AsnCategory;
  why: string;
  /** ASN → who it is. */
  asns: Readonly<Record<number, string>>;
}

export const KNOWN_NETWORKS: readonly KnownNetworkGroup[] = [
  {
    category: 'DATACENTER',
    why: 'Public clouds and hosting companies: visitors from here are servers, scripts or something the user rents.',
    asns: {
      16509: 'Amazon (AWS)',
      14618: 'Amazon (AWS)',
      8987: 'Amazon Data Services Ireland',
      7224: 'Amazon',
      15169: 'Google',
      396982: 'Google Cloud',
      19527: 'Google',
      139070: 'Google Asia Pacific',
      8075: 'Microsoft (Azure)',
      8068: 'Microsoft',
      31898: 'Oracle Cloud',
      36351: 'IBM Cloud',
      45102: 'Alibaba Cloud (US)',
      37963: 'Alibaba Cloud (CN)',
      132203: 'Tencent Cloud',
      45090: 'Tencent Cloud',
      55990: 'Huawei Cloud',
      136907: 'Huawei Cloud',
      135377: 'UCloud',
      200350: 'Yandex.Cloud',
      14061: 'DigitalOcean',
      24940: 'Hetzner',
      213230: 'Hetzner Cloud',
      16276: 'OVHcloud',
      63949: 'Akamai Connected Cloud (Linode)',
      20473: 'Vultr (The Constant Company)',
      12876: 'Scaleway',
      51167: 'Contabo',
      8560: 'IONOS',
      197540: 'netcup',
      29802: 'Hivelocity',
      46606: 'Unified Layer (Bluehost)',
      26496: 'GoDaddy',
      398101: 'GoDaddy',
      22612: 'Namecheap',
      19318: 'Interserver',
      53667: 'FranTech (BuyVM)',
      8100: 'QuadraNet',
      36352: 'HostPapa (ColoCrossing)',
      54290: 'HostPapa (Hostwinds)',
      25820: 'IT7 Networks',
      40676: 'Psychz Networks',
      23470: 'ReliableSite',
      18779: 'EGIHosting',
      9370: 'SAKURA Internet',
      49505: 'Selectel',
      50673: 'Serverius',
      60781: 'Leaseweb',
      28753: 'Leaseweb',
      16265: 'Leaseweb',
      30633: 'Leaseweb',
      59253: 'Leaseweb',
      32613: 'Leaseweb (iWeb)',
      396356: 'Latitude.sh',
      62240: 'Clouvider',
      202425: 'IP Volume',
      44477: 'Stark Industries',
      43350: 'NForce Entertainment',
      200651: 'FlokiNET',
      51852: 'Private Layer',
      // CDN77's operator; its servers are rented en masse for VPN exits.
      60068: 'Datacamp (CDN77)',
      212238: 'Datacamp',
    },
  },
  {
    category: 'CDN',
    why: 'Content delivery and edge networks: traffic is a proxied user (WARP, edge workers) or the CDN itself.',
    asns: {
      13335: 'Cloudflare',
      209242: 'Cloudflare',
      132892: 'Cloudflare',
      20940: 'Akamai',
      16625: 'Akamai',
      12222: 'Akamai',
      32787: 'Akamai (Prolexic)',
      54113: 'Fastly',
      15133: 'Edgecast',
      22822: 'Limelight',
      19551: 'Imperva (Incapsula)',
    },
  },
  {
    category: 'VPN_COMMERCIAL',
    why: 'Networks run by or for consumer VPN and privacy-relay services: many users share each exit address.',
    asns: {
      9009: 'M247 (hosts exits of most large VPN brands)',
      39351: 'Mullvad (31173 Services)',
      216025: 'Mullvad VPN',
      203619: 'IVPN',
      397540: 'Windscribe',
      136787: 'PacketHub (NordVPN)',
      147049: 'PacketHub (NordVPN)',
      207137: 'PacketHub (NordVPN)',
      62371: 'Proton (Proton VPN)',
      201665: 'Anonymizer',
      62635: 'VPNWholesaler',
      36183: 'Akamai egress of Apple iCloud Private Relay',
    },
  },
  {
    category: 'TOR_EXIT',
    why: 'Non-profits that exist to run Tor relays; most of their addresses are exits.',
    asns: {
      60729: 'Stiftung Erneuerbare Freiheit (Torservers.net)',
      396507: 'Emerald Onion',
      208323: 'Foundation for Applied Privacy',
      205100: 'F3 Netze',
      4224: 'The Calyx Institute',
    },
  },
  {
    category: 'MOBILE_CARRIER',
    why: "Mobile operators' own radio networks (mobileCarriers.ts, the ASes carrying mostly mobile subscribers): addresses are shared by many phones through carrier NAT and change often.",
    asns: Object.fromEntries(MOBILE_CARRIERS.filter((c) => c.mobileOnly).map((c) => [c.asn, `${c.operator} (${c.country})`])),
  },
  {
    category: 'RESIDENTIAL_ISP',
    why: 'Large fixed-line consumer ISPs whose names carry none of the words the rules look for.',
    asns: {
      7922: 'Comcast',
      701: 'Verizon (Fios)',
      7018: 'AT&T',
      20115: 'Charter (Spectrum)',
      11426: 'Charter (Spectrum)',
      10796: 'Charter (Spectrum)',
      12271: 'Charter (Spectrum)',
      33363: 'Charter (Spectrum)',
      20001: 'Charter (Spectrum)',
      22773: 'Cox',
      6128: 'Optimum (Cablevision)',
      5650: 'Frontier',
      209: 'CenturyLink (Lumen)',
      3320: 'Deutsche Telekom',
      3215: 'Orange France',
      12322: 'Free',
      2856: 'BT',
      5089: 'Virgin Media',
      3269: 'Telecom Italia',
      3352: 'Telefonica Spain',
      12479: 'Orange Spain',
      12430: 'Vodafone Spain',
      1136: 'KPN',
      3303: 'Swisscom',
      9121: 'Turk Telekom',
      4134: 'China Telecom',
      4837: 'China Unicom',
      4808: 'China Unicom Beijing',
      4766: 'Korea Telecom',
      9318: 'SK Broadband',
      17676: 'SoftBank',
      2516: 'KDDI',
      4713: 'NTT OCN',
      9829: 'BSNL',
      24560: 'Airtel broadband',
      45595: 'PTCL',
      17488: 'Hathway',
    },
  },
  {
    category: 'EDUCATION',
    why: 'National research and education networks and universities.',
    asns: {
      11537: 'Internet2',
      786: 'Jisc (Janet)',
      680: 'DFN',
      2200: 'RENATER',
      137: 'GARR',
      1103: 'SURF',
      2852: 'CESNET',
      2603: 'NORDUnet',
      20965: 'GEANT',
      7575: 'AARNet',
      6509: 'CANARIE',
      1916: 'RNP',
      4538: 'CERNET',
      2907: 'SINET',
      3: 'MIT',
    },
  },
  {
    category: 'GOVERNMENT',
    why: 'Government and military networks.',
    asns: {
      749: 'US Department of Defense',
      721: 'DoD Network Information Center',
      27064: 'DoD Network Information Center',
      5927: 'DoD Network Information Center',
      1733: 'US Department of Defense',
      297: 'NASA',
      7: 'UK Defence Science and Technology Laboratory',
    },
  },
];

const BY_ASN = new Map<number, AsnCategory>();
for (const g of KNOWN_NETWORKS) for (const asn of Object.keys(g.asns)) BY_ASN.set(Number(asn), g.category);

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

export type CategorySource = 'list' | 'asn' | 'org' | 'none';

/** Category of an autonomous system: the curated table, then the name rules, else UNKNOWN. */
export function categorizeAsn(asn: number | null, org: string): { category: AsnCategory; source: CategorySource } {
  const known = asn === null ? undefined : BY_ASN.get(asn);
  if (known) return { category: known, source: 'asn' };
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
export function classifyNetwork(asn: { asn: number | null; org: string } | null, lists: ListFacts): NetworkClass {
  const byAsn = asn ? categorizeAsn(asn.asn, asn.org) : { category: 'UNKNOWN' as const, source: 'none' as const };
  const hostedAsn = HOSTED.has(byAsn.category);
  const isDatacenter = hostedAsn || lists.datacenter || lists.vpn || lists.cdn;
  if (lists.tor) return { category: 'TOR_EXIT', isDatacenter: hostedAsn || lists.datacenter, source: 'list' };
  if (lists.vpn) return { category: 'VPN_COMMERCIAL', isDatacenter, source: 'list' };
  if (lists.cdn) return { category: 'CDN', isDatacenter, source: 'list' };
  if (lists.datacenter && !hostedAsn) return { category: 'DATACENTER', isDatacenter, source: 'list' };
  return { ...byAsn, isDatacenter };
}
