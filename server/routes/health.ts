import { initServer } from '@ts-rest/express';
import { contract } from '../../contract/index.js';
import type { RouteDeps } from './deps.js';

const s = initServer();

export const healthRoutes = ({ store }: RouteDeps) =>
  s.router(contract.health, {
    healthz: async () => ({ status: 200, body: { status: 'ok' } }),
    readyz: async () =>
      (await store.ping())
        ? { status: 200, body: { status: 'ready' } }
        : { status: 503, body: { error: 'Database not reachable' } },
  });
