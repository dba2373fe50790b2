// Sealed results (dashboard API, session): per project, identify can answer
// an encrypted blob instead of the compact result; the customer's backend
// opens it with the project's sealing key (@deviceid/client `unseal`).
import { z } from 'zod';
import { csrfResponses, sessionRoutes } from './account.js';
import { initContract, errorResponse, meta } from './common.js';

const c = initContract();

export const SealingSchema = z
  .object({
    enabled: z.boolean().describe('Whether identify answers sealed results for this project'),
    since: z.string().datetime().nullable().describe('When the current key was created (ISO 8601); null while off'),
  })
  .openapi({ title: 'Sealing', description: "Whether a project's identify answers are sealed, and its key's hint" });

export const SealedIdentifyResultSchema = z
  .object({
    sealedResult: z
      .string()
      .describe(
        'The identification result (IdentifyResult as JSON), sealed with AES-256-GCM under the project sealing key, base64: "dsr\\x01" | 12-byte IV | ciphertext | 16-byte tag. Open it on your backend with `unseal(sealedResult, key)` of @deviceid/client.',
      ),
  })
  .strict();

const notFound = { 404: errorResponse('project_not_found', "Unknown project, or another account's") };

export const sealingContract = c.router(
  {
    getSealing: {
      method: 'GET',
      path: '/api/projects/:projectId/sealing',
      summary: 'Whether the project seals identify results (never the key)',
      responses: { 200: SealingSchema, ...sessionRoutes, ...notFound },
      metadata: meta({ auth: 'session', role: 'admin' }),
    },
    createSealingKey: {
      method: 'POST',
      path: '/api/projects/:projectId/sealing/key',
      summary: 'Turn sealing on with a new key, or rotate the key; the key is returned only in this response',
      description:
        'From this moment identify answers `{sealedResult}` for the project, sealed with the new key (a previous key stops working at once). Body: `{}`.',
      body: z.object({}).strict().openapi({ title: 'CreateSealingKeyRequest', description: 'Turn sealing on, or rotate its key (an empty body)' }),
      responses: {
        201: SealingSchema.extend({ key: z.string().describe('The 32-byte AES-256 key, base64. Shown once; store it on your backend.') }).openapi({
          title: 'SealingKey',
          description: 'The sealing key, shown once',
        }),
        ...sessionRoutes,
        ...csrfResponses,
        ...notFound,
      },
      metadata: meta({ auth: 'session', csrf: true, role: 'admin' }),
    },
    disableSealing: {
      method: 'DELETE',
      path: '/api/projects/:projectId/sealing',
      summary: 'Turn sealing off: identify answers the plain compact result again, and the key is forgotten',
      body: c.noBody(),
      responses: { 200: SealingSchema, ...sessionRoutes, ...csrfResponses, ...notFound },
      metadata: meta({ auth: 'session', csrf: true, role: 'admin' }),
    },
  },
  { strictStatusCodes: true },
);
