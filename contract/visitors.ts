// DELETE /v1/visitors/:visitorId: delete everything stored about a device
// (a privacy request); GET /v1/visitors/:visitorId/related: the same
// machine's other browsers. Secret key only.
import { z } from 'zod';
import { initContract, commonErrorResponses, described, errorResponse, meta, queryInteger, TimestampMs, VisitorIdSchema } from './common.js';

const c = initContract();

export const DeletionSchema = z
  .object({
    deletionId: z
      .string()
      .regex(/^del_[0-9A-HJKMNP-TV-Z]{26}$/)
      .describe('The deletion job; the same for every request naming the device'),
    visitorId: VisitorIdSchema.describe('The device being deleted (its surviving visitor id, when the one given was merged into it)'),
    status: z.enum(['queued', 'running', 'done']).describe('Repeat the request to see how far it got'),
  })
  .openapi({ title: 'VisitorDeletion', description: 'A deletion job: one per device.' });

/** A related visitor is answered from this probability on (server/identification/related.ts). */
export const RELATED_THRESHOLD = 0.8;
/** Related visitors per page, by default and at most. */
export const RELATED_PAGE_SIZE = 10;
export const RELATED_PAGE_MAX = 50;
export const RELATED_EVIDENCE = ['hardware', 'os_rendering', 'network'] as const;

export const RelatedVisitorSchema = z
  .object({
    visitorId: VisitorIdSchema.describe('The other visitor: the same machine in another browser or browser profile (or after losing its storage)'),
    probability: z
      .number()
      .min(RELATED_THRESHOLD)
      .max(1)
      .describe(`0–1: how likely the two are one physical machine; only ${RELATED_THRESHOLD} and above are answered`),
    evidence: z
      .enum(RELATED_EVIDENCE)
      .describe(
        'What weighed most: `hardware` (GPU as both engines name it, screens, colour, touch, audio stack), `os_rendering` (the fonts the OS has, its languages) or `network` (more networks in common than look-alikes share). Every relative also shares a network, an OS, a core count and a time zone with the visitor',
      ),
    lastSeenTogetherAt: TimestampMs.describe('The latest time both were seen on a network they share: the earlier of their last visits from it'),
  })
  .openapi({ title: 'RelatedVisitor', description: 'Another visitor of the project judged to be the same physical machine.' });

export const RelatedVisitorsSchema = z
  .object({
    visitorId: VisitorIdSchema.describe('The visitor asked about: the one given, or the visitor it has been merged into'),
    threshold: z.number().min(0).max(1).describe('The probability from which a relative is answered'),
    relatedVisitors: z
      .array(RelatedVisitorSchema)
      .max(RELATED_PAGE_MAX)
      .describe('Related visitors, the most recently seen together first; never visitors of another project'),
    paginationKey: z.string().optional().describe('Present when there are more: pass it as `paginationKey` for the next page'),
  })
  .openapi({ title: 'RelatedVisitors', description: "A page of the visitor's related visitors in the key's project." });

export const visitorsContract = c.router(
  {
    deleteVisitor: {
      method: 'DELETE',
      path: '/v1/visitors/:visitorId',
      summary: "Delete a visitor's data",
      description:
        'Server-side only: a secret key (`Authorization: Bearer svc_secret_...`, or `X-API-Key`). Deletes the device: the visitor, every visitor merged into it (a merged id deletes the whole device), its events, visit history, fingerprint index entries and device tokens, its search entries and pending webhook deliveries. Afterwards nothing of it can be read, and the device, if it comes back, is a new visitor. Answers 202 once the deletion is queued; it finishes in the background, also after a restart. Idempotent: repeating the request answers the same deletion and its status. Visitors of other accounts are 404.',
      pathParams: z.object({ visitorId: VisitorIdSchema.describe('iq_<ulid>: any id of the device (a merged one deletes the whole device)') }),
      body: c.noBody(),
      responses: {
        202: described(DeletionSchema, 'The deletion is queued (or running, or done): repeat the request to follow it'),
        ...commonErrorResponses,
        401: errorResponse('invalid_secret_key', 'Missing or invalid secret key'),
        404: errorResponse('visitor_not_found', "Unknown id or another account's visitor"),
      },
      metadata: meta({ auth: 'secretKey' }),
    },
    getRelatedVisitors: {
      method: 'GET',
      path: '/v1/visitors/:visitorId/related',
      summary: "Get a visitor's related visitors",
      description: `Server-side only: a secret key. The other visitors of the key's project judged to be the same physical machine in another browser or browser profile (a visitorId is one browser; a fraudster who moves from Chrome to Firefox is a new visitor, and related to the old one). Each with its probability (only ${RELATED_THRESHOLD} and above), the evidence that weighed most and when the two were last seen on the same network; the most recently seen together first, paged by \`paginationKey\`. Judged from what identify stored: visitors meet on the networks the machine is used on (home, office), and are told apart from look-alikes by what the OS and hardware show; identical machines on one network (an office fleet) are not related, however alike. Costs three reads, whatever the history. Visitors of other accounts are 404; a visitor never seen in this project has none.`,
      pathParams: z.object({ visitorId: z.string().describe('iq_<ulid> as returned by identify (a merged id answers for its survivor)') }),
      query: z.object({
        limit: queryInteger(1, RELATED_PAGE_MAX).optional().describe(`Related visitors per page, 1–${RELATED_PAGE_MAX} (default ${RELATED_PAGE_SIZE})`),
        paginationKey: z.string().max(64).optional().describe('The `paginationKey` of the previous page, for the next one'),
      }),
      responses: {
        200: described(RelatedVisitorsSchema, 'A page of related visitors (an empty list when none passes the threshold)'),
        ...commonErrorResponses,
        400: errorResponse('validation_failed', 'A `limit` out of its bounds, or a `paginationKey` this endpoint did not give (`error` names it)', {
          error: 'paginationKey: not one this endpoint gave',
        }),
        401: errorResponse('invalid_secret_key', 'Missing or invalid secret key'),
        404: errorResponse('visitor_not_found', "'Visitor not found': unknown id or another account's visitor"),
      },
      metadata: meta({ auth: 'secretKey' }),
    },
  },
  { strictStatusCodes: true },
);
