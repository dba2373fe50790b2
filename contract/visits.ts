// GET /v1/demo/visits/:visitorId (spec 4.5): a visitor's recent visits, secret key only.
import { z } from 'zod';
import { initContract, commonErrorResponses, described, meta, TimestampMs, errorResponse, VisitorIdSchema } from './common.js';
import { AsnCategorySchema, EventSignalsSchema } from './edge.js';
import { RiskFactorSchema } from './risk.js';

const c = initContract();

export const VISITS_PAGE_SIZE = 20;

export const VisitSchema = z
  .object({
    id: z.string().uuid().describe('Unique visit record identifier; also a `before` cursor'),
    timestamp: TimestampMs.describe('When the visit occurred'),
    country: z.string().describe('ISO 3166-1 alpha-2 country from IP geolocation; empty when unknown'),
    city: z.string().describe('City from IP geolocation; empty when unknown'),
    region: z.string().describe('Region or state name; empty when unknown'),
    asn: z.number().int().min(0).max(4294967295).nullable().describe('Autonomous System Number of the visitor IP; null when unknown'),
    asnOrg: z.string().describe('Organisation of the ASN; empty when unknown'),
    asnCategory: AsnCategorySchema,
    botProbability: z.number().min(0).max(1).describe('0–1: how likely the visit was automated'),
    confidence: z.number().min(0).max(1).describe('0–1 confidence of the identification'),
    riskFactors: z.array(RiskFactorSchema).describe('Risk indicators active during the visit'),
    signals: EventSignalsSchema,
    originalVisitorId: VisitorIdSchema.optional().describe(
      'Present only for a visit identified as a visitor since merged into this one: the id identify returned then',
    ),
  })
  .openapi({ title: 'Visit', description: 'One visit of the visitor (spec 2.8), with the full signal snapshot.' });

export const VisitHistorySchema = z
  .object({
    visitorId: VisitorIdSchema.describe('The visitor the history belongs to: the one asked for, or the visitor it has been merged into'),
    mergedFrom: z.array(VisitorIdSchema).describe('Visitors merged into this one (earlier ids of the same device); their visits are part of this history'),
    visits: z.array(VisitSchema).max(VISITS_PAGE_SIZE).describe('At most 20 visits, newest first'),
    totalVisits: z.number().int().nonnegative().describe('All visits ever recorded for the visitor, those of merged visitors included'),
    firstSeenAt: TimestampMs.describe('First visit from this device'),
    paginationKey: z
      .string()
      .optional()
      .describe('Present when the page is full (there may be older visits): pass it as `paginationKey` for the next, older page'),
  })
  .openapi({ title: 'VisitHistory', description: "A page of the visitor's visits, newest first, with its totals." });

export const visitsContract = c.router(
  {
    getVisits: {
      method: 'GET',
      path: '/v1/demo/visits/:visitorId',
      summary: "Get a visitor's recent visits",
      description:
        "Server-side only: a secret key (`Authorization: Bearer`, or `X-API-Key`). Pages like event search: while the answer carries `paginationKey`, pass it back for the next, older page. Visitors of other accounts are 404. A visitor merged into another (the same device seen again after losing its storage) answers with the survivor's history, which includes the merged visitors' visits.",
      pathParams: z.object({ visitorId: z.string().describe('iq_<ulid> as returned by identify') }),
      query: z.object({
        paginationKey: z.string().max(64).optional().describe('The `paginationKey` of the previous page, for the next, older one (as for event search)'),
        before: z
          .string()
          .max(64)
          .optional()
          .describe('Only visits before this one: a visit `id` or a Unix ms timestamp (`paginationKey` is a visit id; give one or the other)'),
      }),
      responses: {
        200: described(VisitHistorySchema, 'The newest visits (or those before the cursor)'),
        ...commonErrorResponses,
        400: errorResponse('invalid_cursor', 'Malformed cursor', { error: 'before: must be a visit id of this visitor or a Unix ms timestamp' }),
        401: errorResponse('invalid_secret_key', 'Missing or invalid secret key'),
        404: errorResponse('visitor_not_found', "'Visitor not found': unknown id or another account's visitor"),
      },
      metadata: meta({ auth: 'secretKey' }),
    },
  },
  { strictStatusCodes: true },
);
