// GET /v1/events/:requestId (spec 4.4): one full event, secret key only.
import { z } from 'zod';
import {
  initContract,
  commonErrorResponses,
  described,
  meta,
  queryBoolean,
  queryInteger,
  RequestIdSchema,
  TimestampMs,
  UNIX_MS_MAX,
  VisitorIdSchema,
  errorResponse,
} from './common.js';
import { EventSignalsSchema } from './edge.js';
import { DecisionSchema, LABELS, LabelSchema, RULE_ACTIONS, RuleIdSchema } from './decisions.js';
import { HighRecallVisitorIdSchema, JsonObjectSchema, LinkedIdSchema, TagSchema } from './identify.js';
import { BOT_CATEGORIES, BOT_IDENTITIES, FullVerdictsSchema } from './risk.js';

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

export const EventSearchQuerySchema = z
  .object({
    visitorId: VisitorIdSchema.optional().describe('Events of this device (a merged visitor id finds the whole device, as the visit history does)'),
    highRecallVisitorId: VisitorIdSchema.optional().describe(
      "Events identify answered this high-recall id (`highRecallVisitorId`), a merged visitor's id finding the whole device's",
    ),
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
      .describe(
        "`good`: bots proven to be who they say (`verdicts.bot.kind` good: verified by their operator's addresses or DNS, or signed); `bad`: any other automation, spoofed names included; `all`: both; `none`: neither",
      ),
    botCategory: z.enum(BOT_CATEGORIES).optional().describe('Only events whose bot is of this category (`verdicts.bot.info.category`)'),
    botIdentity: z.enum(BOT_IDENTITIES).optional().describe("Only events whose bot's name is this far proven (`verdicts.bot.info.identity`)"),
    suspect: queryBoolean().optional().describe('The manual suspect flag'),
    vpn: queryBoolean().optional().describe('The VPN verdict'),
    tor: queryBoolean().optional().describe('The Tor verdict'),
    proxy: queryBoolean().optional().describe('The proxy verdict'),
    incognito: queryBoolean().optional().describe('The incognito (private browsing) verdict'),
    tampering: queryBoolean().optional().describe('The tampering verdict'),
    virtualMachine: queryBoolean().optional().describe('The virtual machine verdict'),
    devtools: queryBoolean().optional().describe('The DevTools verdict'),
    ipBlocklist: queryBoolean().optional().describe('The IP blocklist verdict'),
    decision: z.enum(RULE_ACTIONS).optional().describe("Only events the project's rules decided this way (`decision.action`)"),
    rule: RuleIdSchema.optional().describe('Only events this live rule decided (`decision.ruleId`)'),
    testRule: RuleIdSchema.optional().describe('Only events this test-mode rule matched (`decision.testMatches`)'),
    label: z
      .enum([...LABELS, 'none'])
      .optional()
      .describe('Only events an analyst labeled so (`none`: not labeled)'),
    minSuspectScore: queryInteger(0, 100).optional().describe('Only events whose suspectScore is at least this (0–100)'),
    country: z
      .string()
      .regex(/^[A-Za-z]{2}$/, 'must be an ISO 3166-1 alpha-2 country code')
      .optional()
      .describe(
        "Only events whose IP location is in this country (ISO 3166-1 alpha-2, any case): identify's `ipLocation.country`, the full event's `signals.server.geo.country`",
      ),
    start: queryInteger(0, UNIX_MS_MAX).optional().describe('Only events at or after this Unix ms time'),
    end: queryInteger(0, UNIX_MS_MAX).optional().describe('Only events at or before this Unix ms time'),
    limit: queryInteger(1, SEARCH_MAX).default(10).describe(`Events per page, 1–${SEARCH_MAX}`),
    paginationKey: z.string().max(200).optional().describe('The `paginationKey` of the previous page, for the next one'),
    reverse: queryBoolean().optional().describe('Oldest first'),
  })
  .strict();

export const FullEventSchema = z
  .object({
    requestId: RequestIdSchema.describe('Identifier of the event, as identify returned it'),
    visitorId: VisitorIdSchema.describe(
      'The device as known now: when the visitor this event was identified as has since been merged into another, the survivor',
    ),
    originalVisitorId: VisitorIdSchema.optional().describe(
      'Present only when it differs from visitorId: the id identify returned for this event, now an alias of visitorId',
    ),
    highRecallVisitorId: HighRecallVisitorIdSchema,
    confidence: z.number().min(0).max(1).describe("0–1: P(visitorId is this device's own), as identify returned it"),
    botProbability: z.number().min(0).max(1).describe('0–1: how likely the event is automated'),
    suspectScore: z.number().int().min(0).max(100).describe('0–100 composite risk'),
    linkedId: LinkedIdSchema.optional().describe('Your identifier for this event; present only if set'),
    tag: JsonObjectSchema.optional().openapi({ type: 'object', 'x-go-type': 'json.RawMessage', description: 'Present only if set; exactly as sent' }),
    suspect: z.boolean().describe('Manually flagged as suspect'),
    ip: z.string().describe('Client IP'),
    url: z.string().describe('Page URL sent with the event; empty when none'),
    referrer: z.string().describe('Referrer sent with the event; empty when none'),
    verdicts: FullVerdictsSchema,
    signals: EventSignalsSchema,
    timestamp: TimestampMs.describe('When the event occurred'),
    // What the project's ruleset decided (allow at rulesetVersion 0 when none was in force), and an analyst's label once given.
    decision: DecisionSchema,
    label: LabelSchema.optional(),
    relatedVisitors: z
      .number()
      .int()
      .nonnegative()
      .optional()
      .describe(
        "Present on GET /v1/events/:requestId: how many related visitors (the same machine in other browsers) the event's visitor has in the event's project now; GET /v1/visitors/:visitorId/related lists them. Absent in search results and webhooks",
      ),
    createdAt: z.string().datetime().describe('ISO 8601 time the event was stored'),
  })
  .openapi({ title: 'FullEvent', description: 'One stored identification event with everything known about it (spec 2.3). Server-side only.' });

export const eventsContract = c.router(
  {
    getEvent: {
      method: 'GET',
      path: '/v1/events/:requestId',
      summary: 'Get a full event',
      description: 'Server-side only: a secret key (`Authorization: Bearer svc_secret_...`, or `X-API-Key`). Events of other accounts are 404.',
      pathParams: z.object({ requestId: z.string().describe('req_<ulid> as returned by identify') }),
      responses: {
        200: described(FullEventSchema, 'The full event'),
        ...commonErrorResponses,
        401: errorResponse('invalid_secret_key', 'Missing or invalid secret key'),
        404: errorResponse('event_not_found', "'Event not found': unknown id or another account's event"),
      },
      metadata: meta({ auth: 'secretKey' }),
    },
    updateEvent: {
      method: 'PATCH',
      path: '/v1/events/:requestId',
      summary: 'Flag an event as suspect, or correct its linkedId and tag',
      description:
        'Server-side only. `suspect` sets or clears the manual flag; `linkedId` and `tag` replace the stored values (`null` removes them). Returns the updated event.',
      pathParams: z.object({ requestId: z.string().describe('req_<ulid> as returned by identify') }),
      body: z
        .object({
          suspect: z.boolean().optional().describe('Sets (true) or clears (false) the manual suspect flag'),
          linkedId: LinkedIdSchema.nullable().optional().describe('Replaces the linkedId; null removes it'),
          tag: TagSchema.nullable().optional().describe('Replaces the tag; null removes it'),
        })
        .strict()
        .refine((b) => Object.keys(b).length > 0, { message: 'give at least one of suspect, linkedId, tag' })
        .openapi({
          title: 'UpdateEventRequest',
          description: 'What to change on the event: at least one of `suspect`, `linkedId`, `tag`.',
          example: { suspect: true },
        }),
      responses: {
        200: described(FullEventSchema, 'The updated event'),
        ...commonErrorResponses,
        401: errorResponse('invalid_secret_key', 'Missing or invalid secret key'),
        404: errorResponse('event_not_found', "'Event not found': unknown id or another account's event"),
      },
      metadata: meta({ auth: 'secretKey' }),
    },
    searchEvents: {
      method: 'GET',
      path: '/v1/events',
      summary: 'Search events, newest first',
      description: `Server-side only. Events of the account matching every filter given, newest first (\`reverse=true\`: oldest first), at most \`limit\` (default 10, at most ${SEARCH_MAX}) per page. When \`paginationKey\` is in the answer there may be more: pass it back, with the same filters, for the next page. A page may hold fewer than \`limit\` events (even none) and still carry a key: each request examines at most ${SEARCH_SCAN_MAX} index entries. What each filter costs: /docs/search on the service.`,
      query: EventSearchQuerySchema,
      responses: {
        200: described(
          z
            .object({
              events: z.array(FullEventSchema).describe('The matching events of this page, newest first (`reverse=true`: oldest first)'),
              paginationKey: z.string().optional().describe('Present when there may be more events: pass it as `paginationKey` for the next page'),
            })
            .openapi({ title: 'EventSearchResult', description: 'One page of an event search.' }),
          'One page of matching events',
        ),
        ...commonErrorResponses,
        401: errorResponse('invalid_secret_key', 'Missing or invalid secret key'),
      },
      metadata: meta({ auth: 'secretKey' }),
    },
  },
  { strictStatusCodes: true },
);
