import { initServer } from '@ts-rest/express';
import { contract } from '../../contract/index.js';
import { apiKeyOf } from '../http/context.js';
import { admission } from '../metering/meter.js';
import type { RouteDeps } from '../services.js';

const s = initServer();

export const identifyRoutes = ({ services }: RouteDeps) =>
  s.router(contract.identify, {
    identify: async ({ req, res, body }) => {
      const origin = typeof req.headers.origin === 'string' ? req.headers.origin : undefined;
      const edge = await services.edge(req);
      // Metering leaves the X-RateLimit-* headers of the admitted call in the slot.
      const slot: { headers?: Record<string, string> } = {};
      const result = await admission.run(slot, () => services.identification.identify(apiKeyOf(req), body, edge, origin));
      if (slot.headers) res.set(slot.headers);
      // `kind` tells the two answers apart (the OpenAPI discriminator).
      return { status: 200, body: 'sealedResult' in result ? { kind: 'sealed' as const, ...result } : { kind: 'result' as const, ...result } };
    },
  });
