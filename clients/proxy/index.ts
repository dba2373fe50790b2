// @deviceid/proxy: serve the deviceid agent and identify from your own site.
// One core (core.ts) under two faces: a standard fetch handler (fetch.ts) and
// Express/connect middleware (node.ts). No dependencies: only what a fetch
// runtime has.
export { createProxyHandler, type ProxyHandler, type ProxyHandlerOptions, type ProxyHandlerProtectOptions } from './fetch.js';
export { createProxyMiddleware, type IncomingRequest, type OutgoingResponse, type ProxyMiddleware, type ProxyMiddlewareOptions } from './node.js';
export {
  DECISION_HEADERS,
  DEVICE_COOKIE,
  PROXY_HEADERS,
  type ClientIpSource,
  type CoreOptions as ProxyOptions,
  type ProtectedPath,
  type ProtectOptions as ProxyProtectOptions,
} from './core.js';
