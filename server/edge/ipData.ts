// Geolocation and autonomous system of one public address: the large part
// of the edge data (the ASN table, ~20 MB of Buffers and more of heap; the
// DB-IP city files, 134 MB, are read at offsets: mmdb.ts). Node has no
// cross-process shared memory without native add-ons, so with WORKERS=N and EDGE_DATA=shared the
// cluster's primary loads it once and answers lookups over the cluster's
// IPC channel (ipDataRemote.ts); otherwise each process loads its own.
import type { Logger } from 'pino';
import { loadAsn, type AsnDb, type AsnInfo } from './asn.js';
import { loadGeo, type Geo, type GeoLocation } from './geo.js';
import type { Ip } from './address.js';

export interface IpFacts {
  location: GeoLocation;
  asn: AsnInfo | null;
}

export interface IpData {
  /** Location and network of a public address (private ones are never asked about). */
  lookup(ip: Ip): Promise<IpFacts>;
  /** `local`: this process holds the data; `primary`: the cluster's primary answers. */
  readonly where: 'local' | 'primary';
  close(): void;
}

/** What the log line of a load says; tests count these per process. */
export const LOADED_MESSAGE = 'IP geolocation and ASN data loaded';

// Loaded once per process, whatever number of apps (tests build several) use it.
let loading: Promise<{ geo: Geo; asn: AsnDb }> | undefined;

/** The data in this process: loaded on the first call, shared by later ones. */
export async function localIpData(logger?: Logger): Promise<IpData> {
  const first = loading === undefined;
  const started = performance.now();
  loading ??= loadAsn().then((asn) => ({ geo: loadGeo(), asn }));
  const { geo, asn } = await loading;
  if (first) logger?.info({ geoBuiltAt: geo.builtAt, asns: asn.stats.asns, loadMs: Math.round(performance.now() - started) }, LOADED_MESSAGE);
  return {
    where: 'local',
    lookup: async (ip) => ({ location: geo.lookup(ip), asn: asn.lookup(ip) }),
    close: () => {},
  };
}
