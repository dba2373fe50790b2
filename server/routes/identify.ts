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
      // `kind` tells the two answers apart (the OpenAPI discriminator).
      return { status: 200, body: 'sealedResult' in result ? { kind: 'sealed' as const, ...result } : { kind: 'result' as const, ...result } };
    },
  });
