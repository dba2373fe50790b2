import { describe, expect, it } from 'vitest';
import { categorizeAsn, classifyNetwork } from '../../../server/edge/asnCategory.js';

const noLists = { tor: false, vpn: false, cdn: false, datacenter: false };

describe('categorizeAsn', () => {
  it.each([
    [16509, 'Amazon.com, Inc.', 'DATACENTER'],
    [15169, 'Google LLC', 'DATACENTER'],
    [24940, 'Hetzner Online GmbH', 'DATACENTER'],
    [13335, 'Cloudflare, Inc.', 'CDN'],
    [20940, 'Akamai International B.V.', 'CDN'],
    [54113, 'Fastly, Inc.', 'CDN'],
    [9009, 'M247 Europe SRL', 'VPN_COMMERCIAL'],
    [39351, '31173 Services AB', 'VPN_COMMERCIAL'],
    [60729, 'Stiftung Erneuerbare Freiheit', 'TOR_EXIT'],
    [21928, 'T-Mobile USA, Inc.', 'MOBILE_CARRIER'],
    [22394, 'Verizon Business', 'MOBILE_CARRIER'],
    [7922, 'Comcast Cable Communications, LLC', 'RESIDENTIAL_ISP'],
    [3215, 'Orange S.A.', 'RESIDENTIAL_ISP'],
    [11537, 'Internet2', 'EDUCATION'],
    [786, 'Jisc Services Limited', 'EDUCATION'],
    [749, 'United States Department of Defense (DoD)', 'GOVERNMENT'],
  ] as const)('AS%i %s → %s from the curated table', (asn, org, category) => {
    expect(categorizeAsn(asn, org)).toEqual({ category, source: 'asn' });
  });

  it.each([
    ['Massachusetts State University', 'EDUCATION'],
    ['Hochschule RheinMain', 'EDUCATION'],
    ['Icelandic Ministry of Education', 'GOVERNMENT'],
    ['City of Prince George', 'GOVERNMENT'],
    ['ExampleVPN', 'UNKNOWN'],
    ['Example VPN Ltd', 'VPN_COMMERCIAL'],
    ['Example CDN Networks', 'CDN'],
    ['Acme Hosting Ltd', 'DATACENTER'],
    ['Dedicated Servers - Sydney', 'DATACENTER'],
    ['HTG Clouds Limited', 'DATACENTER'],
    ['Euro Data Center GmbH', 'DATACENTER'],
    ['Amarillo Wireless', 'MOBILE_CARRIER'],
    ['Any Mobile Ltd.', 'MOBILE_CARRIER'],
    ['DOMUS TELECOM', 'RESIDENTIAL_ISP'],
    ['Blueweb Broadband Services Pvt.ltd', 'RESIDENTIAL_ISP'],
    ['Espaco Link Telecomunicacoes LTDA - ME', 'RESIDENTIAL_ISP'],
    ['Midwest Cable Inc', 'RESIDENTIAL_ISP'],
    ['Conagra Brands Inc.', 'UNKNOWN'],
    ['', 'UNKNOWN'],
  ] as const)('%j → %s by name', (org, category) => {
    expect(categorizeAsn(4_200_000_000, org).category).toBe(category);
  });

  it('takes the AS lists after the curated table and before the name rules', () => {
    const vpn = { datacenter: false, vpn: true };
    const dc = { datacenter: true, vpn: false };
    expect(categorizeAsn(209854, 'Cyberzone S.A.', vpn)).toEqual({ category: 'VPN_COMMERCIAL', source: 'asn-list' });
    expect(categorizeAsn(3561, 'CenturyLink Communications, LLC', dc)).toEqual({ category: 'DATACENTER', source: 'asn-list' });
    expect(categorizeAsn(4_200_000_000, 'Example Telecom', { datacenter: true, vpn: true })).toEqual({ category: 'VPN_COMMERCIAL', source: 'asn-list' });
    // Public lists are broad: a Tor operator on a VPN list, a VPN host on a datacenter list, keep the table's narrower category.
    expect(categorizeAsn(60729, 'Stiftung Erneuerbare Freiheit', vpn)).toEqual({ category: 'TOR_EXIT', source: 'asn' });
    expect(categorizeAsn(9009, 'M247 Europe SRL', dc)).toEqual({ category: 'VPN_COMMERCIAL', source: 'asn' });
    expect(categorizeAsn(4_200_000_000, 'Example Telecom')).toEqual({ category: 'RESIDENTIAL_ISP', source: 'org' });
  });

  it('handles a missing ASN', () => {
    expect(categorizeAsn(null, '')).toEqual({ category: 'UNKNOWN', source: 'none' });
    expect(categorizeAsn(null, 'Some University')).toEqual({ category: 'EDUCATION', source: 'org' });
  });
});

describe('classifyNetwork', () => {
  const google = { asn: 15169, org: 'Google LLC' };
  const comcast = { asn: 7922, org: 'Comcast Cable Communications, LLC' };

  it('marks hosting space as datacenter: clouds, CDNs, VPNs and Tor operators', () => {
    expect(classifyNetwork(google, noLists)).toEqual({ category: 'DATACENTER', isDatacenter: true, source: 'asn' });
    expect(classifyNetwork({ asn: 13335, org: 'Cloudflare, Inc.' }, noLists).isDatacenter).toBe(true);
    expect(classifyNetwork({ asn: 9009, org: 'M247 Europe SRL' }, noLists).isDatacenter).toBe(true);
    expect(classifyNetwork({ asn: 60729, org: 'Stiftung Erneuerbare Freiheit' }, noLists).isDatacenter).toBe(true);
    expect(classifyNetwork(comcast, noLists)).toEqual({ category: 'RESIDENTIAL_ISP', isDatacenter: false, source: 'asn' });
    expect(classifyNetwork({ asn: 21928, org: 'T-Mobile USA, Inc.' }, noLists).isDatacenter).toBe(false);
    expect(classifyNetwork(null, noLists)).toEqual({ category: 'UNKNOWN', isDatacenter: false, source: 'none' });
  });

  it('counts an AS listed as a VPN or datacenter network as hosting space', () => {
    const cyberzone = { asn: 209854, org: 'Cyberzone S.A.' };
    expect(classifyNetwork(cyberzone, noLists)).toEqual({ category: 'UNKNOWN', isDatacenter: false, source: 'none' });
    expect(classifyNetwork(cyberzone, noLists, { datacenter: false, vpn: true })).toEqual({
      category: 'VPN_COMMERCIAL',
      isDatacenter: true,
      source: 'asn-list',
    });
    expect(classifyNetwork(cyberzone, { ...noLists, tor: true }, { datacenter: true, vpn: false })).toEqual({
      category: 'TOR_EXIT',
      isDatacenter: true,
      source: 'list',
    });
  });

  it('lets a list entry about the address outrank its ASN', () => {
    expect(classifyNetwork(comcast, { ...noLists, tor: true })).toEqual({ category: 'TOR_EXIT', isDatacenter: false, source: 'list' });
    expect(classifyNetwork(google, { ...noLists, tor: true })).toEqual({ category: 'TOR_EXIT', isDatacenter: true, source: 'list' });
    expect(classifyNetwork(google, { ...noLists, vpn: true })).toEqual({ category: 'VPN_COMMERCIAL', isDatacenter: true, source: 'list' });
    expect(classifyNetwork(comcast, { ...noLists, cdn: true })).toEqual({ category: 'CDN', isDatacenter: true, source: 'list' });
    expect(classifyNetwork(comcast, { ...noLists, datacenter: true })).toEqual({ category: 'DATACENTER', isDatacenter: true, source: 'list' });
    // A datacenter list hit keeps the ASN's more specific hosting category.
    expect(classifyNetwork({ asn: 9009, org: 'M247 Europe SRL' }, { ...noLists, datacenter: true })).toEqual({
      category: 'VPN_COMMERCIAL',
      isDatacenter: true,
      source: 'asn',
    });
  });
});
