// Liveness and readiness probes.
import { z } from 'zod';
import { initContract, meta } from './common.js';

const c = initContract();

export const DatabaseStateSchema = z
  .object({
    reachable: z.boolean().describe('The database answered a ping within 1 s'),
    launcher: z
      .object({
        state: z.enum(['running', 'restarting', 'stopped']),
        restarts: z.number().int().nonnegative().describe('Restarts after unexpected exits since the server started'),
        lastExit: z
          .object({ at: z.string().datetime(), code: z.number().int().nullable(), signal: z.string().nullable() })
          .nullable()
          .describe('The last unexpected exit, if any'),
      })
      .optional()
      .describe('Only when the server runs and supervises the embedded dev database (FerretDB launcher)'),
  })
  .openapi({ title: 'DatabaseState' });

export const healthContract = c.router(
  {
    healthz: {
      method: 'GET',
      path: '/healthz',
      summary: 'Liveness: the process is up (it does not look at the database)',
      responses: { 200: z.object({ status: z.literal('ok') }) },
      metadata: meta({ auth: 'public' }),
    },
    readyz: {
      method: 'GET',
      path: '/readyz',
      summary: 'Readiness: the database answers',
      responses: {
        200: z.object({ status: z.literal('ready'), database: DatabaseStateSchema }),
        503: z
          .object({ error: z.string(), code: z.literal('service_unavailable'), database: DatabaseStateSchema })
          .describe("'Database not reachable', with the database's state"),
      },
      metadata: meta({ auth: 'public' }),
    },
  },
  { strictStatusCodes: true },
);
