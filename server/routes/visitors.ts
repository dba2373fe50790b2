import { initServer } from '@ts-rest/express';
import { contract } from '../../contract/index.js';
import { RELATED_THRESHOLD } from '../../contract/visitors.js';
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
      const page = await services.related.page(key.accountId, key.projectId, params.visitorId, query.limit, query.paginationKey);
      return {
        status: 200,
        body: {
          visitorId: page.visitorId,
          threshold: RELATED_THRESHOLD,
          relatedVisitors: page.relatives,
          ...(page.paginationKey ? { paginationKey: page.paginationKey } : {}),
        },
      };
    },
  });
