// GET /v1/demo/visits/:visitorId (spec 4.5): a visitor's recent visits, secret key only.
import { z } from 'zod';
import { initContract, commonErrorResponses, meta, TimestampMs, errorResponse, VisitorIdSchema } from './common.js';
import { ASN_CATEGORIES, ServerSignalsSchema } from './edge.js';
import { RiskFactorSchema } from './risk.js';
import { ClientSignalsSchema } from './signals.js';

const c = initContract();

export const VISITS_PAGE_SIZE = 20;

export const VisitSchema = z
  .object({
    id: z.string().uuid(),
    timestamp: TimestampMs,
    country: z.string(),
    city: z.string(),
    region: z.string(),
    asn: z.number().int().nullable(),
    asnOrg: z.string(),
    asnCategory: z.enum(ASN_CATEGORIES),
    botProbability: z.number().min(0).max(1),
    confidence: z.number().min(0).max(1),
    riskFactors: z.array(RiskFactorSchema),
    signals: z.object({ client: ClientSignalsSchema, server: ServerSignalsSchema }),
    originalVisitorId: VisitorIdSchema.optional().describe(
      'Present only for a visit identified as a visitor since merged into this one: the id identify returned then',
    ),
  })
  .openapi({ title: 'Visit' });

export const VisitHistorySchema = z
  .object({
    visitorId: VisitorIdSchema.describe('The visitor the history belongs to: the one asked for, or the visitor it has been merged into'),
    mergedFrom: z.array(VisitorIdSchema).describe('Visitors merged into this one (earlier ids of the same device); their visits are part of this history'),
    visits: z.array(VisitSchema).max(VISITS_PAGE_SIZE).describe('At most 20 visits, newest first'),
    totalVisits: z.number().int().nonnegative().describe('All visits ever recorded for the visitor, those of merged visitors included'),
    firstSeenAt: TimestampMs,
  })
  .openapi({ title: 'VisitHistory' });

export const visitsContract = c.router(
  {
    getVisits: {
      method: 'GET',
      path: '/v1/demo/visits/:visitorId',
      summary: "Get a visitor's recent visits",
      description:
        "Server-side only: a secret key in `X-API-Key`. Visitors of other accounts are 404. A visitor merged into another (the same device seen again after losing its storage) answers with the survivor's history, which includes the merged visitors' visits.",
      pathParams: z.object({ visitorId: z.string().describe('iq_<ulid> as returned by identify') }),
      query: z.object({
        before: z.string().max(64).optional().describe('Cursor for older pages: a visit `id` (returns the visits before it) or a Unix ms timestamp'),
      }),
      responses: {
        200: VisitHistorySchema,
        ...commonErrorResponses,
        400: errorResponse(400, 'before: must be a visit id of this visitor or a Unix ms timestamp', 'Malformed cursor'),
        401: errorResponse(401, 'Invalid or missing secret key', 'Missing or invalid secret key'),
        404: errorResponse(404, 'Visitor not found', "'Visitor not found': unknown id or another account's visitor"),
      },
      metadata: meta({ auth: 'secretKey' }),
    },
  },
  { strictStatusCodes: true },
);
