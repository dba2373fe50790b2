// POST /v1/identify (spec 4.3): browser signals in, compact result out.
import { z } from 'zod';
import { initContract, commonErrorResponses, described, errorResponse, meta, RequestIdSchema, TimestampMs, VisitorIdSchema } from './common.js';
import { IpLocationSchema } from './edge.js';
import { RiskFactorSchema, VerdictsSchema } from './risk.js';
import { SignalsRequestSchema } from './signals.js';
import { DecisionSchema } from './decisions.js';
import { SealedIdentifyResultSchema } from './sealing.js';
import { DEVICE_COOKIE, ProxyRequestHeadersSchema } from './proxy.js';

const c = initContract();

export const LIMITS = {
  bodyBytes: 256 * 1024,
  tagBytes: 16 * 1024,
  /** Nesting levels of `tag` (an object holding a scalar is 1 level). */
  tagDepth: 32,
  linkedIdChars: 256,
  linkedIdProofChars: 200,
  urlChars: 2048,
} as const;

/**
 * True when a JSON value nests deeper than `max` objects/arrays. Iterative:
 * hostile input thousands of levels deep must not overflow the stack.
 */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  for (let item = stack.pop(); item; item = stack.pop()) {
    const [v, depth] = item;
    if (typeof v !== 'object' || v === null) continue;
    if (depth >= max) return true;
    for (const child of Object.values(v)) stack.push([child, depth + 1]);
  }
  return false;
}

const isJsonObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A JSON object passed through as it is. Not `z.record`, which rebuilds the
 * object and drops a `__proto__` key; this keeps every own key (JSON.parse
 * makes `__proto__` an own property, never a prototype).
 */
export const JsonObjectSchema = z.custom<Record<string, unknown>>(isJsonObject, { message: 'Expected object' });

export const TagSchema = JsonObjectSchema.superRefine((t, ctx) => {
  if (nestsDeeperThan(t, LIMITS.tagDepth)) {
    ctx.addIssue({ code: z.ZodIssueCode.custom, message: `must nest at most ${LIMITS.tagDepth} levels deep` });
  } else if (new TextEncoder().encode(JSON.stringify(t)).length > LIMITS.tagBytes) {
    ctx.addIssue({ code: z.ZodIssueCode.custom, message: `must serialize to at most ${LIMITS.tagBytes} bytes of JSON` });
  }
}).openapi({
  type: 'object',
  // Any JSON object: Go clients keep it as raw JSON rather than a map of interface{}.
  'x-go-type': 'json.RawMessage',
  description: `Arbitrary JSON object (any keys, including "__proto__" and ones with "." or "$"), at most 16 KB serialized and ${LIMITS.tagDepth} levels deep; returned unchanged on the full event.`,
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
    referrer: z.string().max(LIMITS.urlChars).optional().describe('Referring page URL'),
    tag: TagSchema.optional(),
    linkedId: LinkedIdSchema.optional().describe(
      "Your identifier for this event, kept on it and searchable. On its own a tag: the page's linkedId is anyone's to write, so identification weighs it only when your server vouches for it, with `linkedIdProof` or through a first-party proxy's deviceid-proxy-linked-id header",
    ),
    linkedIdProof: z
      .string()
      .max(LIMITS.linkedIdProofChars)
      .optional()
      .describe(
        "Your server's signature of `linkedId`, made with the project's linkedId key (@deviceid/client `signLinkedId`): `v1.<expiry, Unix seconds>.<base64url HMAC-SHA-256 of \"<expiry>.<linkedId>\">`, valid until its expiry (at most 7 days ahead). With a valid one the linkedId is the signed-in user's, and evidence of who the device is (the project's linkedIdEvidence); a missing, expired or wrong one leaves it a tag",
      ),
  })
  .openapi({
    title: 'IdentifyRequest',
    description: 'What the browser agent (or a custom client) collected: the signals, when collection began, and optional page and customer context.',
  });

/** The high-recall id: documented once, shared by the identify result, the full event and webhooks. */
export const HighRecallVisitorIdSchema = VisitorIdSchema.describe(
  "The device, matched generously: a visitorId joins the high-recall id of the visitor it most likely continues when the evidence falls short of visitorId's threshold (posterior 0.7 instead of 0.85, at the visitor's first visit or a later one). Every visit of a visitor answers the same one, so it never splits what visitorId joins; it joins more: about 5 points more revisits of a device than visitorId, for about 1.5 points more visits answered another device's (bench/accuracy). For promotions, trials and multi-accounting, where a missed repeat costs more than a false one; not for sign-in trust. Read later (full event, webhooks), it names the group's first visitor as it stands then (merges followed).",
);

/** The compact result as identification computes it (and as a sealed result holds it, with `kind`). */
export const IdentifyResultSchema = z.object({
  requestId: RequestIdSchema.describe('Identifier of this event: read the full event with it'),
  visitorId: VisitorIdSchema.describe(
    'The device. A visitor later found to be a continuation of an older one (the device lost its storage) is merged into it: from then on identify returns the older id, and the merged id stays a working alias in every read.',
  ),
  highRecallVisitorId: HighRecallVisitorIdSchema,
  confidence: z
    .number()
    .min(0)
    .max(1)
    .describe(
      "P(visitorId is this device's own), calibrated: of identifications returned with confidence c, about c are right. Low when few signals were collected or the device looks like others; below 0.7 warrants extra scrutiny.",
    ),
  botProbability: z
    .number()
    .min(0)
    .max(1)
    .describe('0–1: how likely the event is automated (datacenter ASN, headless markers, software renderer, API tampering, UA/TLS mismatch)'),
  suspectScore: z.number().int().min(0).max(100).describe('0–100 composite risk: bot probability, VPN/proxy, incognito, tampering, high activity'),
  visitCount: z.number().int().min(1).describe('Times this device has been identified, this one included'),
  firstSeenAt: TimestampMs,
  lastSeenAt: TimestampMs.describe('Previous identification before this one; equals timestamp on a first visit'),
  riskFactors: z.array(RiskFactorSchema).describe('Active risk indicators'),
  verdicts: VerdictsSchema,
  ip: z.string().describe('Client IP as seen by the edge'),
  ipLocation: IpLocationSchema,
  timestamp: TimestampMs.describe('When this identification event occurred (server time)'),
  // Only inside a sealed result (the site's server opens it): a plain answer never carries it, so a page cannot learn the rules.
  decision: DecisionSchema.optional(),
});

/** Identify's 200 when the project does not seal its results; `kind` tells it from the sealed answer. */
export const IdentifyResultAnswerSchema = IdentifyResultSchema.extend({
  kind: z.literal('result').describe('`result`: the compact result itself (`sealed`: SealedIdentifyResult)'),
}).openapi({ title: 'IdentifyResult', description: 'The compact identification result (spec 2.2). It contains no raw signals.' });

/** Identify's 200 for a project with sealed results on. */
export const SealedIdentifyResultAnswerSchema = SealedIdentifyResultSchema.extend({
  kind: z.literal('sealed').describe('`sealed`: the result is in `sealedResult`, for your backend to open'),
}).openapi({
  title: 'SealedIdentifyResult',
  description: 'The answer of a project with sealed results on: the IdentifyResult, encrypted for your backend.',
});

const schemaRef = (name: string) => `#/components/schemas/${name}`;

/** Identify's 200: the compact result or, for a project with sealing on, the sealed one; `kind` says which. */
export const IdentifyResponseSchema = z.discriminatedUnion('kind', [IdentifyResultAnswerSchema, SealedIdentifyResultAnswerSchema]).openapi({
  discriminator: { propertyName: 'kind', mapping: { result: schemaRef('IdentifyResult'), sealed: schemaRef('SealedIdentifyResult') } },
});

export const identifyContract = c.router(
  {
    identify: {
      method: 'POST',
      path: '/v1/identify',
      summary: 'Identify a device',
      description:
        'Called by the browser agent with a live or test key in `X-API-Key`. Returns the compact identification result; raw signals are never returned here.\n\n' +
        `**Through a first-party proxy** (the agent's endpoint is a path of the customer's own site, which forwards to the service): the proxy adds \`deviceid-proxy-secret\`, \`deviceid-proxy-client-ip\`, \`deviceid-proxy-host\` and \`deviceid-proxy-proto\`, passes the browser's \`Origin\`, and forwards no cookie but \`${DEVICE_COOKIE}\`. With a valid secret the client address, host and scheme come from those headers (the domain allowlist judges the Origin, the page URL and the host), and the answer sets the device cookie: \`Set-Cookie: ${DEVICE_COOKIE}=<signed device token>; Max-Age=34560000; Path=/; HttpOnly; SameSite=Lax\` (plus \`Secure\` when the site is https), which names the device like the agent's own token. Without the secret those headers are ignored; a wrong or revoked secret is 401.`,
      headers: ProxyRequestHeadersSchema,
      body: IdentifyRequestSchema,
      responses: {
        200: described(
          IdentifyResponseSchema,
          'The compact result (`kind: "result"`); for a project with sealing on, `{kind: "sealed", sealedResult}` in its place',
        ),
        ...commonErrorResponses,
        400: errorResponse(
          'invalid_json',
          "Malformed JSON or a field that fails validation (`error` names the field); for a proxied request, a deviceid-proxy-* header the service cannot use: 'deviceid-proxy-client-ip: missing or not an IP address' (and likewise for host and proto)",
        ),
        401: errorResponse(
          'invalid_api_key',
          "Missing, unknown, revoked or secret key: 'Invalid or missing API key'; a wrong or revoked deviceid-proxy-secret: 'Invalid or revoked proxy secret'",
        ),
        403: errorResponse('domain_not_allowed', "The page or Origin host is not in the project's allowed domains: 'Domain not allowed'"),
        429: errorResponse(
          'monthly_quota_exceeded',
          "A plan limit was hit. `error` is 'Rate limit exceeded' (`code` rate_limit_exceeded) for the per-second limit and 'Monthly API call limit exceeded' (`code` monthly_quota_exceeded) for the monthly quota; `usage` and `limit` give the count reached and the plan's limit. Retry after `Retry-After` seconds, backing off exponentially.",
          { ...{ usage: 10000, limit: 10000 } },
        ),
        503: errorResponse(
          'service_unavailable',
          'The database is not reachable, request bodies in flight are over the budget, or first visits of this device raced on and on (each found another had claimed its token); nothing was stored or counted. Retry after `Retry-After` seconds.',
        ),
      },
      metadata: meta({ auth: 'browserKey', proxy: true }),
    },
  },
  { strictStatusCodes: true },
);
