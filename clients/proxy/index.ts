// @deviceid/proxy: serve the deviceid agent and identify from your own site.
// One core (core.ts) under two faces: a standard fetch handler (fetch.ts) and
// Express/connect middleware (node.ts). No dependencies: only what a fetch
// runtime has.
export { createProxyHandler, type ProxyHandler, type ProxyHandlerOptions } from './fetch.js';
export { createProxyMiddleware, type IncomingRequest, type OutgoingResponse, type ProxyMiddleware, type ProxyMiddlewareOptions } from './node.js';
export { DEVICE_COOKIE, PROXY_HEADERS, type ClientIpSource, type CoreOptions as ProxyOptions } from './core.js';
