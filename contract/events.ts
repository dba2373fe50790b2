// GET /v1/events/:requestId (spec 4.4): one full event, secret key only.
import { z } from 'zod';
import { initContract, commonErrorResponses, ErrorSchema, meta, RequestIdSchema, TimestampMs, VisitorIdSchema } from './common.js';
import { ServerSignalsSchema } from './edge.js';
import { LinkedIdSchema } from './identify.js';
import { FullVerdictsSchema } from './risk.js';
import { ClientSignalsSchema } from './signals.js';

const c = initContract();

export const FullEventSchema = z
  .object({
    requestId: RequestIdSchema,
    visitorId: VisitorIdSchema,
    confidence: z.number().min(0).max(1),
    botProbability: z.number().min(0).max(1),
    suspectScore: z.number().int().min(0).max(100),
    linkedId: LinkedIdSchema.optional().describe('Present only if set'),
    tag: z.record(z.string(), z.unknown()).optional().openapi({ type: 'object', description: 'Present only if set; exactly as sent' }),
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
        401: ErrorSchema.describe('Missing or invalid secret key'),
        404: ErrorSchema.describe("'Event not found': unknown id or another account's event"),
      },
      metadata: meta({ auth: 'secretBearer' }),
    },
  },
  { strictStatusCodes: true },
);
