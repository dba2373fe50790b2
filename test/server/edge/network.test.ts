// The network identification weighs (server/edge/network.ts): prefix, AS and kind.
import { describe, expect, it } from 'vitest';
import { categorizeAsn, classifyNetwork } from '../../../server/edge/asnCategory.js';
import { normalizeIp } from '../../../server/edge/address.js';
import { MOBILE_CARRIERS } from '../../../server/edge/curated.js';
import { visitNetwork } from '../../../server/edge/network.js';

const none = { tor: false, vpn: false, cdn: false, datacenter: false };
const of = (ip: string, asn: number, org: string, lists = none) =>
  visitNetwork(normalizeIp(ip), { asn, org, prefix: '' }, classifyNetwork({ asn, org }, lists));

describe('visitNetwork', () => {
  it('is a home line as its /24 and AS', () => {
    expect(of('81.2.69.160', 2856, 'British Telecommunications PLC')).toEqual({ prefix: '81.2.69.0/24', asn: 2856, kind: 'fixed' });
  });
  it("is a carrier's address as mobile", () => {
    expect(of('172.56.1.1', 21928, 'T-Mobile USA, Inc.').kind).toBe('mobile');
  });
  it('says nothing for VPN exits, relays, hosting, Tor and the shared CGNAT space', () => {
    expect(of('185.1.1.1', 9009, 'M247 Europe SRL').kind).toBe('anonymizer');
    expect(of('104.28.1.1', 13335, 'Cloudflare, Inc.').kind).toBe('anonymizer');
    expect(of('3.3.3.3', 16509, 'Amazon').kind).toBe('anonymizer');
    expect(of('81.2.69.1', 2856, 'British Telecommunications PLC', { ...none, tor: true }).kind).toBe('anonymizer');
    expect(of('100.64.3.4', 2856, 'British Telecommunications PLC').kind).toBe('anonymizer');
  });
  it('has no prefix for an unknown address', () => {
    expect(visitNetwork(null, null, classifyNetwork(null, none))).toEqual({ prefix: null, asn: null, kind: 'fixed' });
  });
});

describe('mobile carriers', () => {
  it('recognise every mobile-only AS of the table as a carrier, and leave mixed ones to their other traits', () => {
    for (const c of MOBILE_CARRIERS.filter((x) => x.mobileOnly)) expect(categorizeAsn(c.asn, '').category).toBe('MOBILE_CARRIER');
    expect(categorizeAsn(3320, 'Deutsche Telekom AG').category).toBe('RESIDENTIAL_ISP');
  });
  it('cover the big operators of Europe, Japan and Australia that were missing', () => {
    const known = new Set(MOBILE_CARRIERS.map((c) => c.asn));
    for (const asn of [6805, 51207, 9605, 1221, 4804, 33915, 12912]) expect(known.has(asn)).toBe(true);
  });
});
