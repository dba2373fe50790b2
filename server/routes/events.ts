import { initServer } from '@ts-rest/express';
import { contract } from '../../contract/index.js';
import { apiKeyOf } from '../http/context.js';
import type { RouteDeps } from '../services.js';

const s = initServer();

export const eventsRoutes = ({ services }: RouteDeps) =>
  s.router(contract.events, {
    getEvent: async ({ req, params }) => ({
      status: 200,
      body: await services.events.getWithRelated(apiKeyOf(req).accountId, params.requestId),
    }),
    updateEvent: async ({ req, params, body }) => ({
      status: 200,
      body: await services.events.update(apiKeyOf(req).accountId, params.requestId, body),
    }),
    searchEvents: async ({ req, query }) => ({
      status: 200,
      body: await services.search.search(apiKeyOf(req).accountId, query),
    }),
  });
