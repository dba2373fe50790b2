// GET /v1/events/:requestId (spec 4.4): one full event, secret key only.
import { z } from 'zod';
import { initContract, commonErrorResponses, meta, RequestIdSchema, TimestampMs, VisitorIdSchema, errorResponse } from './common.js';
import { ServerSignalsSchema } from './edge.js';
import { JsonObjectSchema, LinkedIdSchema, TagSchema } from './identify.js';
import { FullVerdictsSchema } from './risk.js';
import { ClientSignalsSchema } from './signals.js';

const c = initContract();

export const SEARCH_MAX = 100;

export const FullEventSchema = z
  .object({
    requestId: RequestIdSchema,
    visitorId: VisitorIdSchema,
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
      summary: 'Find events by linkedId, newest first',
      description: `Server-side only. Returns at most \`limit\` (default 10, at most ${SEARCH_MAX}) of the newest ${SEARCH_MAX} events with this linkedId.`,
      query: z.object({
        linkedId: LinkedIdSchema.min(1),
        limit: z.coerce.number().int().min(1).max(SEARCH_MAX).default(10),
      }),
      responses: {
        200: z.object({ events: z.array(FullEventSchema) }).openapi({ title: 'EventSearchResult' }),
        ...commonErrorResponses,
        401: errorResponse(401, 'Invalid or missing secret key', 'Missing or invalid secret key'),
      },
      metadata: meta({ auth: 'secretBearer' }),
    },
  },
  { strictStatusCodes: true },
);
