import { initServer } from '@ts-rest/express';
import { contract } from '../../contract/index.js';
import type { RouteDeps } from '../services.js';

const s = initServer();

export const healthRoutes = ({ store, launcher }: RouteDeps) =>
  s.router(contract.health, {
    healthz: async () => ({ status: 200, body: { status: 'ok' } }),
    readyz: async () => {
      const database = { reachable: await store.ping(), ...(launcher ? { launcher: launcher.status() } : {}) };
      return database.reachable
        ? { status: 200, body: { status: 'ready', database } }
        : { status: 503, body: { error: 'Database not reachable', code: 'service_unavailable' as const, database } };
    },
  });
