// Liveness and readiness probes.
import { z } from 'zod';
import { initContract, ErrorSchema, meta } from './common.js';

const c = initContract();

export const healthContract = c.router(
  {
    healthz: {
      method: 'GET',
      path: '/healthz',
      summary: 'Liveness: the process is up',
      responses: { 200: z.object({ status: z.literal('ok') }) },
      metadata: meta({ auth: 'public' }),
    },
    readyz: {
      method: 'GET',
      path: '/readyz',
      summary: 'Readiness: the database answers',
      responses: {
        200: z.object({ status: z.literal('ready') }),
        503: ErrorSchema.describe('The database does not answer'),
      },
      metadata: meta({ auth: 'public' }),
    },
  },
  { strictStatusCodes: true },
);
