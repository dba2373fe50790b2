// Sealed results (dashboard API): thin adapters to SealingService.
import { initServer } from '@ts-rest/express';
import { contract } from '../../contract/index.js';
import { sessionOf } from '../http/context.js';
import type { RouteDeps } from '../services.js';

const s = initServer();

export const sealingRoutes = ({ services }: RouteDeps) =>
  s.router(contract.sealing, {
    getSealing: async ({ req, params }) => ({ status: 200, body: await services.sealing.status(sessionOf(req).accountId, params.projectId) }),
    createSealingKey: async ({ req, params }) => ({ status: 201, body: await services.sealing.createKey(sessionOf(req).accountId, params.projectId) }),
    disableSealing: async ({ req, params }) => ({ status: 200, body: await services.sealing.disable(sessionOf(req).accountId, params.projectId) }),
  });
