// First-party proxy (dashboard API): thin adapters to ProxyService.
import { initServer } from '@ts-rest/express';
import { contract } from '../../contract/index.js';
import { sessionOf } from '../http/context.js';
import type { RouteDeps } from '../services.js';

const s = initServer();

export const proxyRoutes = ({ services }: RouteDeps) =>
  s.router(contract.proxy, {
    getProxy: async ({ req, params }) => ({ status: 200, body: await services.proxy.settings(sessionOf(req).accountId, params.projectId) }),
    createProxySecret: async ({ req, params }) => ({ status: 201, body: await services.proxy.createSecret(sessionOf(req).accountId, params.projectId) }),
    revokeProxySecret: async ({ req, params }) => ({ status: 200, body: await services.proxy.revoke(sessionOf(req).accountId, params.projectId) }),
    getProxyTraffic: async ({ req, params }) => ({ status: 200, body: await services.proxy.traffic(sessionOf(req).accountId, params.projectId) }),
  });
