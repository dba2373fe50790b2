// DELETE /v1/visitors/:visitorId: delete everything stored about a device
// (a privacy request), secret key only.
import { z } from 'zod';
import { initContract, commonErrorResponses, described, errorResponse, meta, VisitorIdSchema } from './common.js';

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
  },
  { strictStatusCodes: true },
);
