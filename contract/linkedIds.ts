// The project's linkedId key (dashboard API, session): the customer's server
// signs the signed-in user's id with it (@deviceid/client `signLinkedId`) and
// the page sends the signature with identify as `linkedIdProof`, so that
// identification can take the linkedId as evidence: one the page sends alone
// is anyone's to write. The key is derived from the server's secret and the
// project, never stored; a rotation or revocation ends the previous one at once.
import { z } from 'zod';
import { csrfResponses, sessionRoutes } from './account.js';
import { errorResponse, initContract, meta } from './common.js';

const c = initContract();

/** The longest a linkedId proof may be valid ahead. */
export const LINKED_ID_PROOF_MAX_DAYS = 7;

export const LinkedIdKeySettingsSchema = z
  .object({
    enabled: z.boolean().describe('Whether the project has a linkedId key (proofs made with it are checked on identify)'),
    since: z.string().datetime().nullable().describe('When the current key was created (ISO 8601); null while none'),
  })
  .openapi({ title: 'LinkedIdKeySettings', description: "Whether a project's server can vouch for linkedIds, and since when (never the key)" });

const notFound = { 404: errorResponse('project_not_found', "Unknown project, or another account's") };
const path = '/api/projects/:projectId/linked-id-key';

export const linkedIdsContract = c.router(
  {
    getLinkedIdKey: {
      method: 'GET',
      path,
      summary: 'Whether the project has a linkedId key (never the key)',
      responses: { 200: LinkedIdKeySettingsSchema, ...sessionRoutes, ...notFound },
      metadata: meta({ auth: 'session', role: 'admin' }),
    },
    createLinkedIdKey: {
      method: 'POST',
      path,
      summary: 'Create the linkedId key, or rotate it; the key is returned only in this response',
      description: `Your server signs the signed-in user's id with it (\`signLinkedId\` of @deviceid/client) and the page passes the proof to the agent (\`get({ linkedId, linkedIdProof })\`): identify then takes the linkedId as evidence of who the device is. Proofs are valid until their expiry, at most ${LINKED_ID_PROOF_MAX_DAYS} days ahead. A rotation ends the previous key at once. Body: \`{}\`.`,
      body: z.object({}).strict().openapi({ title: 'CreateLinkedIdKeyRequest', description: 'Create or rotate the linkedId key (an empty body)' }),
      responses: {
        201: LinkedIdKeySettingsSchema.extend({
          key: z.string().describe('The key (`lid_` and 43 base64url characters). Shown once; keep it on your server, never in a page.'),
        }).openapi({ title: 'LinkedIdKey', description: 'The linkedId key, shown once' }),
        ...sessionRoutes,
        ...csrfResponses,
        ...notFound,
      },
      metadata: meta({ auth: 'session', csrf: true, role: 'admin' }),
    },
    revokeLinkedIdKey: {
      method: 'DELETE',
      path,
      summary: 'Revoke the linkedId key: proofs made with it are no longer believed',
      body: c.noBody(),
      responses: { 200: LinkedIdKeySettingsSchema, ...sessionRoutes, ...csrfResponses, ...notFound },
      metadata: meta({ auth: 'session', csrf: true, role: 'admin' }),
    },
  },
  { strictStatusCodes: true },
);
