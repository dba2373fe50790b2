// GET /v1/events/:requestId (spec 4.4): one full event, secret key only.
import { z } from 'zod';
import { initContract, commonErrorResponses, meta, queryInteger, RequestIdSchema, TimestampMs, UNIX_MS_MAX, VisitorIdSchema, errorResponse } from './common.js';
import { ServerSignalsSchema } from './edge.js';
import { JsonObjectSchema, LinkedIdSchema, TagSchema } from './identify.js';
import { FullVerdictsSchema } from './risk.js';
import { ClientSignalsSchema } from './signals.js';

const c = initContract();

export const SEARCH_MAX = 100;
/** Index entries one search request examines at most before it answers with what it found and a paginationKey. */
export const SEARCH_SCAN_MAX = 2_000;

const ipv4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

/** An IPv4 or IPv6 address, optionally with a /prefix length (CIDR). */
export function parseIpFilter(s: string): { address: string; bits: number | null } | null {
  const m = /^([^/]+)(?:\/(\d{1,3}))?$/.exec(s.trim());
  if (!m) return null;
  const address = m[1]!;
  const isV4 = ipv4.test(address);
  const isV6 = !isV4 && address.includes(':') && /^[0-9a-fA-F:.]+$/.test(address);
  if (!isV4 && !isV6) return null;
  const bits = m[2] === undefined ? null : Number(m[2]);
  if (bits !== null && bits > (isV4 ? 32 : 128)) return null;
  return { address, bits };
}

/** A boolean in a query string: `true` or `false`. */
const BooleanQuery = z.enum(['true', 'false']).transform((v) => v === 'true');

export const EventSearchQuerySchema = z
  .object({
    visitorId: VisitorIdSchema.optional().describe('Events of this device (a merged visitor id finds the whole device, as the visit history does)'),
    linkedId: LinkedIdSchema.min(1).optional(),
    ip: z
      .string()
      .max(50)
      .refine((s) => parseIpFilter(s) !== null, 'must be an IP address or a CIDR (203.0.113.0/24, 2001:db8::/48)')
      .optional()
      .describe('A client IP address, or a CIDR range'),
    bot: z
      .enum(['good', 'bad', 'none', 'all'])
      .optional()
      .describe('`good`: crawlers naming themselves in the User-Agent; `bad`: other events the bot verdict fired on; `all`: both; `none`: neither'),
    suspect: BooleanQuery.optional().describe('The manual suspect flag'),
    vpn: BooleanQuery.optional().describe('The VPN verdict'),
    tor: BooleanQuery.optional().describe('The Tor verdict'),
    start: queryInteger(0, UNIX_MS_MAX).optional().describe('Only events at or after this Unix ms time'),
    end: queryInteger(0, UNIX_MS_MAX).optional().describe('Only events at or before this Unix ms time'),
    limit: queryInteger(1, SEARCH_MAX).default(10),
    paginationKey: z.string().max(200).optional().describe('From the previous page'),
    reverse: BooleanQuery.optional().describe('Oldest first'),
  })
  .strict();

export const FullEventSchema = z
  .object({
    requestId: RequestIdSchema,
    visitorId: VisitorIdSchema.describe(
      'The device as known now: when the visitor this event was identified as has since been merged into another, the survivor',
    ),
    originalVisitorId: VisitorIdSchema.optional().describe(
      'Present only when it differs from visitorId: the id identify returned for this event, now an alias of visitorId',
    ),
    confidence: z.number().min(0).max(1),
    botProbability: z.number().min(0).max(1),
    suspectScore: z.number().int().min(0).max(100),
    linkedId: LinkedIdSchema.optional().describe('Present only if set'),
    tag: JsonObjectSchema.optional().openapi({ type: 'object', description: 'Present only if set; exactly as sent' }),
    suspect: z.boolean().describe('Manually flagged as suspect'),
    ip: z.string(),
    url: z.string(),
    referrer: z.string(),
    verdicts: FullVerdictsSchema,
    signals: z.object({ client: ClientSignalsSchema, server: ServerSignalsSchema }),
    timestamp: TimestampMs,
    createdAt: z.string().datetime().describe('ISO 8601 time the event was stored'),
  })
  .openapi({ title: 'FullEvent' });

export const eventsContract = c.router(
  {
    getEvent: {
      method: 'GET',
      path: '/v1/events/:requestId',
      summary: 'Get a full event',
      description: 'Server-side only: `Authorization: Bearer svc_secret_...`. Events of other accounts are 404.',
      pathParams: z.object({ requestId: z.string().describe('req_<ulid> as returned by identify') }),
      responses: {
        200: FullEventSchema,
        ...commonErrorResponses,
        401: errorResponse(401, 'Invalid or missing secret key', 'Missing or invalid secret key'),
        404: errorResponse(404, 'Event not found', "'Event not found': unknown id or another account's event"),
      },
      metadata: meta({ auth: 'secretBearer' }),
    },
    updateEvent: {
      method: 'PATCH',
      path: '/v1/events/:requestId',
      summary: 'Flag an event as suspect, or correct its linkedId and tag',
      description:
        'Server-side only. `suspect` sets or clears the manual flag; `linkedId` and `tag` replace the stored values (`null` removes them). Returns the updated event.',
      pathParams: z.object({ requestId: z.string() }),
      body: z
        .object({
          suspect: z.boolean().optional(),
          linkedId: LinkedIdSchema.nullable().optional(),
          tag: TagSchema.nullable().optional(),
        })
        .strict()
        .refine((b) => Object.keys(b).length > 0, { message: 'give at least one of suspect, linkedId, tag' })
        .openapi({ title: 'UpdateEventRequest' }),
      responses: {
        200: FullEventSchema,
        ...commonErrorResponses,
        401: errorResponse(401, 'Invalid or missing secret key', 'Missing or invalid secret key'),
        404: errorResponse(404, 'Event not found', "'Event not found': unknown id or another account's event"),
      },
      metadata: meta({ auth: 'secretBearer' }),
    },
    searchEvents: {
      method: 'GET',
      path: '/v1/events',
      summary: 'Search events, newest first',
      description: `Server-side only. Events of the account matching every filter given, newest first (\`reverse=true\`: oldest first), at most \`limit\` (default 10, at most ${SEARCH_MAX}) per page. When \`paginationKey\` is in the answer there may be more: pass it back, with the same filters, for the next page. A page may hold fewer than \`limit\` events (even none) and still carry a key: each request examines at most ${SEARCH_SCAN_MAX} index entries. Each filter's cost is in the README (Event search).`,
      query: EventSearchQuerySchema,
      responses: {
        200: z
          .object({
            events: z.array(FullEventSchema),
            paginationKey: z.string().optional().describe('Present when there may be more events: the `paginationKey` of the next page'),
          })
          .openapi({ title: 'EventSearchResult' }),
        ...commonErrorResponses,
        401: errorResponse(401, 'Invalid or missing secret key', 'Missing or invalid secret key'),
      },
      metadata: meta({ auth: 'secretBearer' }),
    },
  },
  { strictStatusCodes: true },
);
