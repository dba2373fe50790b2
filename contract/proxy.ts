// First-party proxy integration: the agent script and identify served from
// the customer's own site (a path such as /metrics/ on its own host), which
// forwards them to the service with a per-project proxy secret. The service
// then believes the proxy's headers (client address, the site's host and
// scheme) and answers a proxied identify with a device cookie set from the
// server (HttpOnly, on the site's host), which outlives script storage.
//
// Dashboard API (session): the project's proxy secret (created, rotated with
// an overlap window, revoked; shown once) and whether proxied traffic arrives.
import { z } from 'zod';
import { csrfResponses, sessionRoutes } from './account.js';
import { errorResponse, initContract, meta } from './common.js';

const c = initContract();

/**
 * Headers a proxy sends to the service. They are believed only beside a
 * valid `deviceid-proxy-secret`; without one they are ignored (the client
 * address is then the socket's, or the operator's TRUST_PROXY chain's).
 * A proxy must remove any of them the browser sent before adding its own.
 */
export const PROXY_HEADERS = {
  /** The project's proxy secret (`svc_proxy_…`). */
  secret: 'deviceid-proxy-secret',
  /** The browser's IP address as the proxy saw it. */
  clientIp: 'deviceid-proxy-client-ip',
  /** The site's host (and port), as the browser addressed it: the host the device cookie is set on. */
  host: 'deviceid-proxy-host',
  /** `https` or `http`: how the browser reached the site (`https` makes the cookie `Secure`). */
  proto: 'deviceid-proxy-proto',
  /** Optional: the last error the proxy met on its way to the service, `<code>; at=<Unix ms>` (shown in the dashboard). */
  error: 'deviceid-proxy-error',
  /**
   * Optional: the signed-in user's id as the site's own session knows it (set by the site's server, never taken from the
   * page). The one linkedId identification takes as evidence: a linkedId the page sends is anyone's to write.
   */
  linkedId: 'deviceid-proxy-linked-id',
} as const;

/** The device cookie the service sets on a proxied identify; the only cookie a proxy forwards. */
export const DEVICE_COOKIE = '_didh';

/**
 * Its lifetime, renewed by every proxied identify: 400 days, the longest
 * Chrome keeps a cookie (RFC 6265bis caps Max-Age at 400 days; longer is cut
 * to that). Set by the server over HTTP, it is not subject to Safari's 7-day
 * cap on cookies written by script, as long as the site's host and the
 * proxy's are one (see docs/proxy.md).
 */
export const DEVICE_COOKIE_MAX_AGE_S = 400 * 24 * 3600;

/** How long the previous proxy secret keeps working after a rotation. */
export const PROXY_ROTATION_OVERLAP_MS = 24 * 3600 * 1000;

/** The window of the traffic figures: the current hour and the 23 before it. */
export const PROXY_TRAFFIC_HOURS = 24;

/**
 * Errors a proxy can meet. The service records the first two itself (a
 * wrong or revoked secret, headers it cannot use); a proxy reports the others
 * in `deviceid-proxy-error` with its next request that gets through.
 */
export const PROXY_ERROR_CODES = ['invalid_secret', 'invalid_headers', 'timeout', 'unreachable', 'service_error'] as const;
export type ProxyErrorCode = (typeof PROXY_ERROR_CODES)[number];

const proxyHeader = (description: string) => z.string().optional().describe(description);

/** The proxy's headers on identify, as the contract declares them (any string passes validation: only a valid secret makes them count). */
export const ProxyRequestHeadersSchema = z.object({
  [PROXY_HEADERS.secret]: proxyHeader(
    "Sent by a first-party proxy (@deviceid/proxy, or an nginx or Caddy recipe): the project's proxy secret. With a valid one the request is proxied and the other deviceid-proxy-* headers are believed; a wrong or revoked one answers 401 'Invalid or revoked proxy secret'. Without it those headers are ignored.",
  ),
  [PROXY_HEADERS.clientIp]: proxyHeader('Proxied requests: the browser’s IP address (required with a valid secret).'),
  [PROXY_HEADERS.host]: proxyHeader('Proxied requests: the site’s host, e.g. shop.example.com (required with a valid secret).'),
  [PROXY_HEADERS.proto]: proxyHeader('Proxied requests: `https` or `http`, how the browser reached the site (required with a valid secret).'),
  [PROXY_HEADERS.error]: proxyHeader(
    'Proxied requests, optional: the last error the proxy met, `<code>; at=<Unix ms>` with a code of timeout, unreachable, service_error.',
  ),
  [PROXY_HEADERS.linkedId]: proxyHeader(
    "Proxied requests, optional: the signed-in user's id from the site's own session (1–256 characters; the proxy sets it, the page cannot). It is the event's linkedId, and the only linkedId identification takes as evidence (the project's linkedIdEvidence setting): one the page sends in the body is anyone's to write, so it stays a tag.",
  ),
});

const isoDate = z.string().datetime();

export const ProxySettingsSchema = z
  .object({
    enabled: z.boolean().describe('The project has an active proxy secret'),
    secretHint: z.string().nullable().describe('Prefix and last four characters of the current secret (svc_proxy_…a1B2); null when none'),
    createdAt: isoDate.nullable().describe('When the current secret was created'),
    previousSecretHint: z.string().nullable().describe('The secret replaced by the last rotation while it still works; null otherwise'),
    previousValidUntil: isoDate.nullable().describe('Until when the previous secret keeps working (24 hours after the rotation)'),
    cookie: z
      .object({
        name: z.literal(DEVICE_COOKIE).describe("The cookie's name on the customer's site"),
        maxAgeSeconds: z.literal(DEVICE_COOKIE_MAX_AGE_S).describe('Its lifetime: 400 days, the longest browsers keep a cookie'),
      })
      .describe('The device cookie proxied identify calls set on the site'),
  })
  .openapi({ title: 'ProxySettings', description: "A project's first-party proxy: whether a secret is set (never the secret) and the device cookie" });

export const ProxySecretSchema = ProxySettingsSchema.extend({
  secret: z.string().describe('The proxy secret (`svc_proxy_…`). Shown only in this response: put it in the proxy’s configuration, never in a page.'),
}).openapi({ title: 'ProxySecret', description: 'The proxy settings with the new secret, shown once' });

export const ProxyErrorSchema = z
  .object({
    code: z.enum(PROXY_ERROR_CODES).describe('What went wrong, for programs'),
    message: z.string().describe('What happened, for people'),
    at: isoDate.describe('When it happened'),
    source: z
      .enum(['service', 'proxy'])
      .describe('`service`: the service refused a proxied request; `proxy`: the proxy reported it could not reach the service'),
  })
  // Not a named component: OpenAPI 3.0 cannot say "this component, or null" (null fails the referenced schema).
  .describe('An error a proxy of the project met');

export const ProxyTrafficSchema = z
  .object({
    from: isoDate.describe(`Start of the window: the current hour and the ${PROXY_TRAFFIC_HOURS - 1} before it (UTC hours)`),
    identify: z.number().int().nonnegative().describe("The project's successful identify calls in the window"),
    proxied: z.number().int().nonnegative().describe('Of those, the ones that came through a proxy with a valid secret'),
    share: z.number().min(0).max(1).nullable().describe('proxied / identify; null when there was no identify call'),
    lastError: ProxyErrorSchema.nullable().describe('The last error a proxy of the project met (kept until another replaces it)'),
  })
  .openapi({ title: 'ProxyTraffic', description: "Share of the last 24 h's identify calls that came through a proxy, and the last error a proxy met" });

const notFound = { 404: errorResponse('project_not_found', "Unknown project, or another account's") };
const path = '/api/projects/:projectId/proxy';

export const proxyContract = c.router(
  {
    getProxy: {
      method: 'GET',
      path,
      summary: "The project's proxy integration: whether a secret is set (never the secret) and the device cookie",
      responses: { 200: ProxySettingsSchema, ...sessionRoutes, ...notFound },
      metadata: meta({ auth: 'session', role: 'admin' }),
    },
    createProxySecret: {
      method: 'POST',
      path: `${path}/secret`,
      summary: 'Create the proxy secret, or rotate it; the secret is returned only in this response',
      description:
        'Rotating keeps the previous secret working for 24 hours, so proxies can be redeployed with the new one meanwhile (a secret older than that is dropped). To end a leaked secret at once, revoke (DELETE) and create again. Simultaneous rotations take turns, each replacing the one before it. Stored as its SHA-256 only. Body: `{}`.',
      body: z.object({}).strict().openapi({ title: 'CreateProxySecretRequest', description: 'Create or rotate the proxy secret (an empty body)' }),
      responses: {
        201: ProxySecretSchema,
        ...sessionRoutes,
        ...csrfResponses,
        ...notFound,
        409: errorResponse('conflict', "'Conflict': other rotations of the same secret kept winning the race (simultaneous ones take turns); try again"),
      },
      metadata: meta({ auth: 'session', csrf: true, role: 'admin' }),
    },
    revokeProxySecret: {
      method: 'DELETE',
      path: `${path}/secret`,
      summary: 'Revoke the proxy secret, and the previous one if it still works: proxied requests answer 401 from now on',
      body: c.noBody(),
      responses: { 200: ProxySettingsSchema, ...sessionRoutes, ...csrfResponses, ...notFound },
      metadata: meta({ auth: 'session', csrf: true, role: 'admin' }),
    },
    getProxyTraffic: {
      method: 'GET',
      path: `${path}/traffic`,
      summary: `Whether proxied traffic arrives: the share of the last ${PROXY_TRAFFIC_HOURS} hours' identify calls that came through a proxy, and the last error a proxy met`,
      responses: { 200: ProxyTrafficSchema, ...sessionRoutes, ...notFound },
      metadata: meta({ auth: 'session', role: 'admin' }),
    },
  },
  { strictStatusCodes: true },
);
