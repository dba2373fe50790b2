// The edge stage of a request: who is connecting (client IP behind trusted
// proxies), from where (DB-IP geolocation), through which network (ASN and
// its category, IP lists) and with what client (TLS and HTTP fingerprints).
// Geolocation and ASN come from IpData: this process's copy, loaded once per
// process (about 20 µs a request), or the cluster primary's (ipDataRemote.ts,
// one IPC round trip for an address the worker has not seen recently). The
// IP lists are small (about 1.5 MB for 150,000 ranges) and stay in every
// process, which re-reads them when their files change.
import type { IncomingMessage } from 'node:http';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { EdgeFacts } from '../risk/edgeFacts.js';
import { classifyNetwork } from './asnCategory.js';
import { UNKNOWN_LOCATION } from './geo.js';
import { httpFingerprint } from './httpFingerprint.js';
import { normalizeIp, type Ip } from './address.js';
import { clientIp, isPrivateOrReserved, isTrustedPeer } from './ip.js';
import { localIpData, type IpData } from './ipData.js';
import { visitNetwork } from './network.js';
import { loadLists, type IpLists } from './lists.js';
import { NO_TLS_FACTS, tlsFacts } from './tls.js';

/**
 * A request a first-party proxy forwarded with a valid secret
 * (server/proxy/): the browser's address as the proxy saw it. The connection
 * is the proxy's, so its TLS says nothing of the browser and its headers
 * arrive in the proxy's order and case.
 */
export interface BehindProxy {
  clientIp: Ip;
}

export type NetworkFacts = Omit<EdgeFacts, 'bot'>;

export interface Edge {
  /** Rejects with a 503 ApiError when the cluster primary does not answer a lookup. */
  /** Everything but the bot's name, which server/bots judges (services.ts). */
  analyze(req: IncomingMessage & { secure?: boolean }, proxied?: BehindProxy): Promise<NetworkFacts>;
  clientIp(req: IncomingMessage): string;
  lists: IpLists;
  close(): void;
}

/** `ipData` defaults to this process's own copy (loaded once per process). */
export async function loadEdge(config: Pick<Config, 'listsDir' | 'trustProxy' | 'tlsHeaders'>, logger: Logger, ipData?: IpData): Promise<Edge> {
  const [data, lists] = await Promise.all([
    ipData ?? localIpData(logger),
    loadLists({
      dir: config.listsDir,
      onError: (err) => logger.warn({ err }, 'IP list could not be read; keeping the previous one'),
      onReload: (kind, status) => logger.info({ list: kind, entries: status?.files.reduce((n, f) => n + f.entries, 0) ?? 0 }, 'IP list loaded'),
    }),
  ]);
  const trust = config.trustProxy;
  const tlsHeaderNames = Object.values(config.tlsHeaders);

  /** The client's address; null only when not even the socket's address parses. */
  const parsedIpOf = (req: IncomingMessage): Ip | null => {
    const socket = req.socket.remoteAddress ?? '';
    return clientIp({ socketAddress: socket, headers: req.headers }, trust) ?? normalizeIp(socket);
  };
  const unparsed = (req: IncomingMessage): Ip => ({ address: req.socket.remoteAddress ?? '', version: 4 });

  return {
    lists,
    clientIp: (req) => (parsedIpOf(req) ?? unparsed(req)).address,
    close: () => {
      lists.close();
      data.close();
    },
    async analyze(req, proxied) {
      const parsed = proxied ? proxied.clientIp : parsedIpOf(req);
      const ip = parsed ?? unparsed(req);
      const isPrivate = isPrivateOrReserved(ip);
      const facts = isPrivate || !parsed ? null : await data.lookup(ip);
      // A copy: remote answers are cached and shared between requests.
      const location = { ...(facts?.location ?? UNKNOWN_LOCATION) };
      const asnInfo = facts?.asn ?? null;
      const hits = lists.check(ip);
      const status = lists.status();
      const network = classifyNetwork(asnInfo, hits, lists.checkAsn(asnInfo?.asn ?? null));
      const trusted = isTrustedPeer(req.socket.remoteAddress ?? '', trust);
      const forwardedHttps =
        trusted &&
        String(req.headers['x-forwarded-proto'] ?? '')
          .split(',')[0]
          ?.trim() === 'https';
      const known = (kind: keyof typeof status, hit: boolean) => (status[kind] ? hit : null);
      return {
        ip: ip.address,
        ipVersion: ip.version,
        isPrivate,
        prefix: asnInfo?.prefix ?? null,
        network: visitNetwork(parsed, asnInfo, network),
        location,
        asn: { asn: asnInfo?.asn ?? null, org: asnInfo?.org ?? '', category: network.category, isDatacenter: network.isDatacenter },
        lists: {
          torExit: known('tor', hits.tor),
          blocklisted: known('blocklist', hits.blocklist),
          proxy: known('proxy', hits.proxy),
          vpn: known('vpn', hits.vpn),
          datacenter: known('datacenter', hits.datacenter),
        },
        tls: proxied ? { ...NO_TLS_FACTS } : tlsFacts(req, trusted, config.tlsHeaders),
        http: httpFingerprint(req, { secureContext: req.secure === true || forwardedHttps, ignoreHeaders: tlsHeaderNames, proxied: proxied !== undefined }),
      };
    },
  };
}
