import { initServer } from '@ts-rest/express';
import { contract } from '../../contract/index.js';
import { apiKeyOf } from '../http/context.js';
import type { RouteDeps } from '../services.js';

const s = initServer();

export const visitorsRoutes = ({ services }: RouteDeps) =>
  s.router(contract.visitors, {
    deleteVisitor: async ({ req, params }) => ({
      status: 202,
      body: await services.deletions.request(apiKeyOf(req).accountId, params.visitorId),
    }),
  });
