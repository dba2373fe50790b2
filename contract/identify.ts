// POST /v1/identify (spec 4.3): browser signals in, compact result out.
import { z } from 'zod';
import { initContract, commonErrorResponses, ErrorSchema, meta, RateLimitErrorSchema, RequestIdSchema, TimestampMs, VisitorIdSchema } from './common.js';
import { IpLocationSchema } from './edge.js';
import { RiskFactorSchema, VerdictsSchema } from './risk.js';
import { SignalsRequestSchema } from './signals.js';

const c = initContract();

export const LIMITS = {
  bodyBytes: 256 * 1024,
  tagBytes: 16 * 1024,
  linkedIdChars: 256,
  urlChars: 2048,
} as const;

export const TagSchema = z
  .record(z.string(), z.unknown())
  .refine((t) => new TextEncoder().encode(JSON.stringify(t)).length <= LIMITS.tagBytes, {
    message: `must serialize to at most ${LIMITS.tagBytes} bytes of JSON`,
  })
  .openapi({
    type: 'object',
    description: 'Arbitrary JSON object (any keys, including ones with "." or "$"), at most 16 KB serialized; returned unchanged on the full event.',
  });

export const LinkedIdSchema = z
  .string()
  .max(LIMITS.linkedIdChars)
  .describe('Your identifier for this event: a user, session or order id (at most 256 characters)');

export const IdentifyRequestSchema = z
  .object({
    signals: SignalsRequestSchema,
    timestamp: TimestampMs.describe('Unix ms when signal collection began on the client'),
    url: z.string().max(LIMITS.urlChars).optional().describe('Page URL; checked against the project domain allowlist'),
    referrer: z.string().max(LIMITS.urlChars).optional(),
    tag: TagSchema.optional(),
    linkedId: LinkedIdSchema.optional(),
  })
  .openapi({ title: 'IdentifyRequest' });

export const IdentifyResultSchema = z
  .object({
    requestId: RequestIdSchema,
    visitorId: VisitorIdSchema,
    confidence: z.number().min(0).max(1).describe('Estimated 1 − P(this match is wrong). Below 0.7 warrants extra scrutiny.'),
    botProbability: z.number().min(0).max(1),
    suspectScore: z.number().int().min(0).max(100),
    visitCount: z.number().int().min(1).describe('Times this device has been identified, this one included'),
    firstSeenAt: TimestampMs,
    lastSeenAt: TimestampMs.describe('Previous identification before this one; equals timestamp on a first visit'),
    riskFactors: z.array(RiskFactorSchema),
    verdicts: VerdictsSchema,
    ip: z.string(),
    ipLocation: IpLocationSchema,
    timestamp: TimestampMs.describe('When this identification event occurred (server time)'),
  })
  .openapi({ title: 'IdentifyResult' });

export const identifyContract = c.router(
  {
    identify: {
      method: 'POST',
      path: '/v1/identify',
      summary: 'Identify a device',
      description:
        'Called by the browser agent with a live or test key in `X-API-Key`. Returns the compact identification result; raw signals are never returned here.',
      body: IdentifyRequestSchema,
      responses: {
        200: IdentifyResultSchema,
        ...commonErrorResponses,
        401: ErrorSchema.describe("Missing, unknown, revoked or secret key: 'Invalid or missing API key'"),
        403: ErrorSchema.describe("The page or Origin host is not in the project's allowed domains: 'Domain not allowed'"),
        429: RateLimitErrorSchema,
      },
      metadata: meta({ auth: 'browserKey' }),
    },
  },
  { strictStatusCodes: true },
);
