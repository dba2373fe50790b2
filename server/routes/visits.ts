import { initServer } from '@ts-rest/express';
import { contract } from '../../contract/index.js';
import { apiKeyOf } from '../http/context.js';
import type { RouteDeps } from '../services.js';

const s = initServer();

export const visitsRoutes = ({ services }: RouteDeps) =>
  s.router(contract.visits, {
    getVisits: async ({ req, params, query }) => ({
      status: 200,
      body: await services.visits.history(apiKeyOf(req).accountId, params.visitorId, query.before),
    }),
  });
