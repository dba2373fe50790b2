// What the edge knows about a request, as the risk engine consumes it.
// Produced by server/edge (IP, geolocation, ASN, lists, TLS, HTTP).
import type { ASN_CATEGORIES, HTTP_CLASSIFICATIONS } from '../../contract/edge.js';
import type { BotCategory } from '../../contract/risk.js';
import type { VisitNetwork } from '../identification/evidence.js';

export interface EdgeFacts {
  ip: string;
  ipVersion: 4 | 6;
  isPrivate: boolean;
  prefix: string | null;
  /** The client's network as identification weighs it. */
  network: VisitNetwork;
  location: {
    country: string;
    city: string;
    region: string;
    latitude: number | null;
    longitude: number | null;
    /** IANA zone derived from the coordinates; null when unknown. */
    timezone: string | null;
  };
  asn: { asn: number | null; org: string; category: (typeof ASN_CATEGORIES)[number]; isDatacenter: boolean };
  /** Membership in the configured IP lists; null when that list is not configured. */
  lists: {
    torExit: boolean | null;
    blocklisted: boolean | null;
    proxy: boolean | null;
    vpn: boolean | null;
    datacenter: boolean | null;
  };
  tls: { cipher: string | null; version: string | null; ja4: string | null };
  http: { fingerprint: string; classification: (typeof HTTP_CLASSIFICATIONS)[number] };
  /** A bot's name (server/bots/): what the User-Agent claims, judged by where the request comes from, and a Web Bot Auth signature. */
  bot: {
    /** null: the User-Agent claims no bot. */
    claim: { name: string; provider: string; category: BotCategory; identity: 'verified' | 'spoofed' | 'unknown'; listDate: string | null } | null;
    /** null: the request carries no signature. `unverifiable`: the agent's key directory could not be read in time. */
    signature: { result: 'signed'; agent: string } | { result: 'invalid'; agent: string | null; reason: string; unverifiable: boolean } | null;
  };
}
