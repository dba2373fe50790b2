// The client's network as identification weighs it (server/identification/
// evidence.ts): the address prefix, its AS, and what kind of network that
// is. Addresses of anonymizers (VPN exits, iCloud Private Relay and other
// relays, Tor, hosting) are shared by crowds that change per session, and
// so is the carrier-grade NAT space (RFC 6598) when a proxy passes it on:
// they say nothing about the device.
import type { VisitNetwork } from '../identification/evidence.js';
import type { AsnInfo } from './asn.js';
import type { NetworkClass } from './asnCategory.js';
import { prefixOf, type Ip } from './address.js';
import { RangeSet } from './ranges.js';

const ANONYMIZING = new Set(['VPN_COMMERCIAL', 'TOR_EXIT', 'DATACENTER', 'CDN']);
const SHARED_NAT = RangeSet.fromCidrs(['100.64.0.0/10']).set;

export function visitNetwork(ip: Ip | null, asn: AsnInfo | null, cls: NetworkClass): VisitNetwork {
  if (!ip) return { prefix: null, asn: null, kind: 'fixed' };
  const kind = SHARED_NAT.has(ip) || ANONYMIZING.has(cls.category) || cls.isDatacenter ? 'anonymizer' : cls.category === 'MOBILE_CARRIER' ? 'mobile' : 'fixed';
  return { prefix: prefixOf(ip), asn: asn?.asn ?? null, kind };
}
