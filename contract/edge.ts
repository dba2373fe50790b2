// What the edge (IP, TLS, HTTP) tells about a request: ipLocation and the
// server-side signals of a full event (spec 2.3, 2.5, 2.7).
import { z } from 'zod';
import './common.js';

export const IpLocationSchema = z
  .object({
    country: z.string().describe('ISO 3166-1 alpha-2; empty when unknown (private or reserved address)'),
    city: z.string(),
    region: z.string(),
    latitude: z.number().nullable().describe('null when unknown'),
    longitude: z.number().nullable().describe('null when unknown'),
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

export const VPN_VERDICTS = ['not_detected', 'suspected', 'detected'] as const;
export const HTTP_CLASSIFICATIONS = ['browser', 'headless', 'curl', 'python', 'go', 'node', 'other_tool', 'unknown'] as const;

const Check = z.object({
  result: z.enum(['consistent', 'inconsistent', 'unknown']),
  evidence: z.string().describe('Short human-readable reason'),
});

export const ServerSignalsSchema = z
  .object({
    asn: z.object({
      asn: z.number().int().nullable(),
      org: z.string(),
      category: z.enum(ASN_CATEGORIES).describe('Spec 2.7 categories, plus UNKNOWN when no rule matches'),
      isDatacenter: z.boolean(),
    }),
    geo: z.object({
      country: z.string(),
      city: z.string(),
      timezone: z.string().nullable().describe('IANA time zone of the IP location (derived from its coordinates); null when unknown'),
      rttCoherence: z.number().min(0).max(1).nullable().describe('0–1 agreement of IP location with device-reported locale; null when not computable'),
    }),
    tls: z
      .object({
        cipher: z.string().nullable(),
        version: z.string().nullable(),
        ja4: z.string().nullable(),
      })
      .describe('null fields: the service did not terminate TLS and no trusted proxy forwarded the values'),
    vpnDetection: z.object({
      verdict: z.enum(VPN_VERDICTS),
      confidence: z.number().min(0).max(1),
    }),
    ipNetwork: z.object({
      version: z.union([z.literal(4), z.literal(6)]),
      prefix: z.string().nullable().describe('Routed prefix (CIDR) containing the address, when known'),
      isPrivate: z.boolean().describe('Private, loopback, link-local or otherwise reserved address'),
      isTorExit: z.boolean().nullable().describe('null: no Tor exit list is configured (LISTS_DIR)'),
      isBlocklisted: z.boolean().nullable().describe('null: no blocklist is configured'),
      isProxy: z.boolean().nullable().describe('null: no proxy list is configured'),
      isVpn: z.boolean().nullable().describe('In a configured VPN range list; null: none configured'),
    }),
    http: z.object({
      fingerprint: z.string().describe('Hash of header names in arrival order plus a few header values'),
      classification: z.enum(HTTP_CLASSIFICATIONS),
    }),
    consistency: z.object({
      timezoneVsIp: Check,
      languagesVsCountry: Check,
      userAgentVsPlatform: Check,
      userAgentVsTls: Check,
    }),
  })
  .openapi({ title: 'ServerSignals', description: 'Signals the service derives at the edge from the connection itself.' });
