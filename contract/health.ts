// Liveness and readiness probes.
import { z } from 'zod';
import { described, errorResponse, ErrorSchema, initContract, meta } from './common.js';

const c = initContract();

export const DatabaseStateSchema = z
  .object({
    reachable: z.boolean().describe('The database answered a ping within 1 s'),
    launcher: z
      .object({
        state: z.enum(['running', 'restarting', 'stopped']).describe('What the launcher is doing'),
        restarts: z.number().int().nonnegative().describe('Restarts after unexpected exits since the server started'),
        lastExit: z
          .object({
            at: z.string().datetime().describe('When it exited (ISO 8601)'),
            code: z.number().int().nullable().describe('Exit code; null when a signal ended it'),
            signal: z.string().nullable().describe('The signal that ended it; null when it exited by itself'),
          })
          .nullable()
          .openapi({ title: 'DatabaseExit', description: 'The last unexpected exit of the embedded dev database, if any.' }),
      })
      .optional()
      .openapi({
        title: 'DatabaseLauncher',
        description: 'Only when the server runs and supervises the embedded dev database (FerretDB launcher).',
      }),
  })
  .openapi({ title: 'DatabaseState', description: 'Whether the database answers, and the embedded dev database launcher when there is one.' });

export const HealthSchema = z.object({ status: z.literal('ok').describe('Always `ok`') }).openapi({ title: 'Health', description: 'The process is up.' });

export const ReadinessSchema = z
  .object({ status: z.literal('ready').describe('Always `ready`'), database: DatabaseStateSchema })
  .openapi({ title: 'Readiness', description: 'The database answers.' });

export const NotReadySchema = ErrorSchema.extend({ database: DatabaseStateSchema }).openapi({
  title: 'NotReady',
  description: "An Error (`code` service_unavailable, 'Database not reachable') with the database's state.",
});

/** The probes take no body; one sent anyway is parsed like any other request's. */
const probeErrors = {
  400: errorResponse('invalid_json', 'A body was sent with Content-Type application/json and is not JSON (probes take no body)'),
  413: errorResponse('body_too_large', 'A body larger than the limit was sent (probes take no body)', { error: 'Request body too large (limit 262144 bytes)' }),
};

export const healthContract = c.router(
  {
    healthz: {
      method: 'GET',
      path: '/healthz',
      summary: 'Liveness: the process is up (it does not look at the database)',
      responses: { 200: described(HealthSchema, 'The process is up'), ...probeErrors },
      metadata: meta({ auth: 'public' }),
    },
    readyz: {
      method: 'GET',
      path: '/readyz',
      summary: 'Readiness: the database answers',
      responses: {
        200: described(ReadinessSchema, 'The database answers'),
        ...probeErrors,
        503: described(NotReadySchema, "'Database not reachable', with the database's state"),
      },
      metadata: meta({ auth: 'public' }),
    },
  },
  { strictStatusCodes: true },
);
