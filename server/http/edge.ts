// Edge facts of a request before the edge data (geolocation, ASN, lists, TLS)
// is loaded: only what the connection itself proves. Unknown stays unknown.
import { isIP } from 'node:net';
import type { Request } from 'express';
import type { EdgeFacts } from '../risk/edgeFacts.js';

export function socketOnlyEdge(req: Request): EdgeFacts {
  let ip = req.socket.remoteAddress ?? '';
  if (ip.startsWith('::ffff:') && isIP(ip.slice(7)) === 4) ip = ip.slice(7);
  return {
    ip,
    ipVersion: isIP(ip) === 6 ? 6 : 4,
    isPrivate: /^(127\.|10\.|192\.168\.|172\.(1[6-9]|2\d|3[01])\.|::1$|f[cd])/.test(ip),
    prefix: null,
    location: { country: '', city: '', region: '', latitude: null, longitude: null, timezone: null },
    asn: { asn: null, org: '', category: 'UNKNOWN', isDatacenter: false },
    lists: { torExit: false, blocklisted: false, proxy: false, vpn: false, datacenter: false },
    tls: { cipher: null, version: null, ja4: null },
    http: { fingerprint: '', classification: 'unknown' },
  };
}
