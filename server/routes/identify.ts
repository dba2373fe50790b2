import { initServer } from '@ts-rest/express';
import { contract } from '../../contract/index.js';
import { apiKeyOf } from '../http/context.js';
import type { RouteDeps } from '../services.js';

const s = initServer();

export const identifyRoutes = ({ services }: RouteDeps) =>
  s.router(contract.identify, {
    identify: async ({ req, body }) => {
      const origin = typeof req.headers.origin === 'string' ? req.headers.origin : undefined;
      const result = await services.identification.identify(apiKeyOf(req), body, await services.edge(req), origin);
      return { status: 200, body: result };
    },
  });
