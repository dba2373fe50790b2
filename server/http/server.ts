// The HTTP or HTTPS server around the app, with the limits on slow and idle
// clients (config.httpLimits): Node's defaults let a client take 300 s to
// send a request, and take any number of connections, each holding up to a
// body's limit (256 KB) of a body being received. Past a timeout the client
// gets 408 and its connection is closed; past MAX_CONNECTIONS a new
// connection is closed on arrival.
import { readFileSync } from 'node:fs';
import { createServer as createHttpServer, type RequestListener, type ServerOptions } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { Config } from '../config.js';
import { trackTls } from '../edge/tls.js';

export function createServer(config: Pick<Config, 'tls' | 'httpLimits'>, app: RequestListener) {
  const limits = config.httpLimits;
  const options: ServerOptions = {
    requestTimeout: limits.requestTimeoutMs,
    headersTimeout: limits.headersTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    // Node checks the timeouts every 30 s by default, letting a client run that much over.
    connectionsCheckingInterval: Math.min(1_000, limits.headersTimeoutMs),
  };
  const server = config.tls
    ? trackTls(createHttpsServer({ ...options, cert: readFileSync(config.tls.certFile), key: readFileSync(config.tls.keyFile) }, app))
    : createHttpServer(options, app);
  server.maxConnections = limits.maxConnections;
  return server;
}
