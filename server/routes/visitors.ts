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
    getRelatedVisitors: async ({ req, params, query }) => {
      const key = apiKeyOf(req);
      return { status: 200, body: await services.related.answer(key.accountId, key.projectId, params.visitorId, query.limit, query.paginationKey) };
    },
  });
