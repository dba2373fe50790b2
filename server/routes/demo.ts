import { initServer } from '@ts-rest/express';
import { contract } from '../../contract/index.js';
import { sessionOf } from '../http/context.js';
import type { RouteDeps } from '../services.js';

const s = initServer();

export const demoRoutes = ({ services }: RouteDeps) =>
  s.router(contract.demo, {
    getAccountEvent: async ({ req, params }) => ({
      status: 200,
      body: await services.events.getWithRelated(sessionOf(req).accountId, params.requestId),
    }),
    updateAccountEvent: async ({ req, params, body }) => ({
      status: 200,
      body: await services.events.update(sessionOf(req).accountId, params.requestId, body),
    }),
  });
