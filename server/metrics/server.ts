// GET /metrics on a port of its own (METRICS_PORT), never on the public one:
// bound to METRICS_HOST (127.0.0.1 by default, where only this machine's
// Prometheus reaches it), and with METRICS_TOKEN set, answered only to
// `Authorization: Bearer <token>` (config.ts refuses a host beyond loopback
// without a token).
import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface MetricsEndpoint {
  port: number;
  host: string;
  /** Bearer token a scrape must present; null: none (loopback only). */
  token: string | null;
}

export const metricsUrl = ({ host, port }: MetricsEndpoint) => `http://${host.includes(':') ? `[${host}]` : host}:${port}/metrics`;

/** What a scrape answers: the exposition text and its content type. */
export type Scrape = () => Promise<{ text: string; contentType: string }>;

const digest = (s: string) => createHash('sha256').update(s).digest();

function authorized(header: string | undefined, tokenDigest: Buffer | null): boolean {
  if (!tokenDigest) return true;
  const presented = /^Bearer (\S+)$/i.exec(header ?? '')?.[1];
  // Digests of equal length: the comparison takes the same time whatever was presented.
  return presented !== undefined && timingSafeEqual(digest(presented), tokenDigest);
}

/** Starts the metrics listener; resolves with it listening (its port, when METRICS_PORT=0). */
export async function serveMetrics(endpoint: MetricsEndpoint, scrape: Scrape, onError: (err: unknown) => void): Promise<Server & { port: number }> {
  const tokenDigest = endpoint.token === null ? null : digest(endpoint.token);
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics') return void res.writeHead(404, { 'content-type': 'text/plain' }).end('Not found: metrics are at /metrics\n');
    if (req.method !== 'GET' && req.method !== 'HEAD')
      return void res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain' }).end('Method not allowed\n');
    if (!authorized(req.headers.authorization, tokenDigest)) {
      return void res
        .writeHead(401, { 'www-authenticate': 'Bearer realm="metrics"', 'content-type': 'text/plain' })
        .end('Unauthorized: Authorization: Bearer <METRICS_TOKEN>\n');
    }
    scrape().then(
      ({ text, contentType }) => res.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-store' }).end(req.method === 'HEAD' ? undefined : text),
      (err: unknown) => {
        onError(err);
        res.writeHead(500, { 'content-type': 'text/plain' }).end('Metrics could not be gathered\n');
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(endpoint.port, endpoint.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return Object.assign(server, { port: (server.address() as AddressInfo).port });
}
