import { initServer } from '@ts-rest/express';
import { contract } from '../../contract/index.js';
import { apiKeyView } from '../accounts/views.js';
import { apiKeyOf } from '../http/context.js';
import type { RouteDeps } from '../services.js';

const s = initServer();

export const keysRoutes = ({ services }: RouteDeps) =>
  s.router(contract.keys, {
    getSelf: async ({ req }) => ({ status: 200, body: { apiKey: apiKeyView(apiKeyOf(req)) } }),
    revokeSelf: async ({ req }) => ({ status: 200, body: { apiKey: await services.keys.revokeSelf(apiKeyOf(req)) } }),
  });
