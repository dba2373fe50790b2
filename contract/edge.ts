// What the edge (IP, TLS, HTTP) tells about a request: ipLocation and the
// server-side signals of a full event (spec 2.3, 2.5, 2.7).
import { z } from 'zod';
import './common.js';
import { ClientSignalsSchema } from './signals.js';

export const IpLocationSchema = z
  .object({
    country: z.string().describe('ISO 3166-1 alpha-2; empty when unknown (private or reserved address)'),
    city: z.string().describe('City name; empty when unknown'),
    region: z.string().describe('Region or state name; empty when unknown'),
    latitude: z.number().min(-90).max(90).nullable().describe('Degrees north (WGS 84); null when unknown'),
    longitude: z.number().min(-180).max(180).nullable().describe('Degrees east (WGS 84); null when unknown'),
  })
  .openapi({ title: 'IpLocation', description: 'Geolocation of the client IP. IP Geolocation by DB-IP.' });

export const ASN_CATEGORIES = [
  'RESIDENTIAL_ISP',
  'MOBILE_CARRIER',
  'DATACENTER',
  'VPN_COMMERCIAL',
  'TOR_EXIT',
  'EDUCATION',
  'GOVERNMENT',
  'CDN',
  'UNKNOWN',
] as const;

export const AsnCategorySchema = z
  .enum(ASN_CATEGORIES)
  .openapi({ title: 'AsnCategory', description: 'What kind of network the IP belongs to (spec 2.7), plus UNKNOWN when no rule matches.' });

export const VPN_VERDICTS = ['not_detected', 'suspected', 'detected'] as const;
export const HTTP_CLASSIFICATIONS = ['browser', 'headless', 'curl', 'python', 'go', 'node', 'other_tool', 'unknown'] as const;

const CheckSchema = z
  .object({
    result: z.enum(['consistent', 'inconsistent', 'unknown']).describe('`unknown` when either side is missing'),
    evidence: z.string().describe('Short human-readable reason'),
  })
  .openapi({ title: 'ConsistencyCheck', description: 'Whether two things the request tells agree.' });

export const ServerSignalsSchema = z
  .object({
    asn: z
      .object({
        asn: z.number().int().min(0).max(4294967295).nullable().describe('Autonomous System Number of the client IP; null when unknown'),
        org: z.string().describe('Organisation of the AS; empty when unknown'),
        category: AsnCategorySchema,
        isDatacenter: z.boolean().describe('The AS is a hosting or cloud provider'),
      })
      .openapi({ title: 'AsnServerSignal', description: 'The autonomous system of the client IP.' }),
    geo: z
      .object({
        country: z.string().describe('ISO 3166-1 alpha-2 country of the IP; empty when unknown'),
        city: z.string().describe('City of the IP; empty when unknown'),
        timezone: z.string().nullable().describe('IANA time zone of the IP location (derived from its coordinates); null when unknown'),
        rttCoherence: z.number().min(0).max(1).nullable().describe('0–1 agreement of IP location with device-reported locale; null when not computable'),
      })
      .openapi({ title: 'GeoServerSignal', description: 'Geolocation of the client IP and how well the device agrees with it.' }),
    tls: z
      .object({
        cipher: z.string().nullable().describe('Negotiated cipher suite; null when unknown'),
        version: z.string().nullable().describe('TLS version (e.g. "TLSv1.3"); null when unknown'),
        ja4: z.string().nullable().describe('JA4 fingerprint of the ClientHello; null when unknown'),
      })
      .openapi({
        title: 'TlsServerSignal',
        description: 'The TLS connection. null fields: the service did not terminate TLS and no trusted proxy forwarded the values.',
      }),
    vpnDetection: z
      .object({
        verdict: z.enum(VPN_VERDICTS).describe('`not_detected`, `suspected` or `detected`'),
        confidence: z.number().min(0).max(1).describe('0–1 confidence of the verdict'),
      })
      .openapi({ title: 'VpnDetectionServerSignal', description: 'VPN detection from IP ranges, time zone and locale coherence.' }),
    ipNetwork: z
      .object({
        version: z.union([z.literal(4), z.literal(6)]).describe('IP version: 4 or 6'),
        prefix: z.string().nullable().describe('Routed prefix (CIDR) containing the address, when known'),
        isPrivate: z.boolean().describe('Private, loopback, link-local or otherwise reserved address'),
        isTorExit: z.boolean().nullable().describe('null: no Tor exit list is configured (LISTS_DIR)'),
        isBlocklisted: z.boolean().nullable().describe('null: no blocklist is configured'),
        isProxy: z.boolean().nullable().describe('null: no proxy list is configured'),
        isVpn: z.boolean().nullable().describe('In a configured VPN range list; null: none configured'),
      })
      .openapi({ title: 'IpNetworkServerSignal', description: 'The client IP address and the lists it is on.' }),
    http: z
      .object({
        fingerprint: z
          .string()
          .describe(
            'Hash of header names in arrival order plus a few header values (through a first-party proxy, which does not keep the browser’s order: the names sorted, flag `p`, and the classification from the User-Agent alone)',
          ),
        classification: z.enum(HTTP_CLASSIFICATIONS).describe('What kind of client the headers look like'),
      })
      .openapi({ title: 'HttpServerSignal', description: 'The HTTP request headers.' }),
    consistency: z
      .object({
        timezoneVsIp: CheckSchema,
        languagesVsCountry: CheckSchema,
        userAgentVsPlatform: CheckSchema,
        userAgentVsTls: CheckSchema,
      })
      .openapi({
        title: 'ConsistencyServerSignal',
        description:
          'Cross-checks: `timezoneVsIp` the device time zone against the IP location, `languagesVsCountry` its languages against the country, `userAgentVsPlatform` the User-Agent against the reported platform, `userAgentVsTls` the User-Agent against the TLS fingerprint.',
      }),
  })
  .openapi({ title: 'ServerSignals', description: 'Signals the service derives at the edge from the connection itself.' });

/** A full event's (and a visit's) signals: what the browser collected and what the edge derived. */
export const EventSignalsSchema = z.object({ client: ClientSignalsSchema, server: ServerSignalsSchema }).openapi({
  title: 'EventSignals',
  description: 'All signals of the event: `client` from the browser, `server` from the edge. Never returned to the browser.',
});
