// The project's linkedId key (dashboard API): thin adapters to LinkedIdKeyService.
import { initServer } from '@ts-rest/express';
import { contract } from '../../contract/index.js';
import { sessionOf } from '../http/context.js';
import type { RouteDeps } from '../services.js';

const s = initServer();

export const linkedIdRoutes = ({ services }: RouteDeps) =>
  s.router(contract.linkedIds, {
    getLinkedIdKey: async ({ req, params }) => ({ status: 200, body: await services.linkedIdKey.status(sessionOf(req).accountId, params.projectId) }),
    createLinkedIdKey: async ({ req, params }) => ({ status: 201, body: await services.linkedIdKey.create(sessionOf(req).accountId, params.projectId) }),
    revokeLinkedIdKey: async ({ req, params }) => ({ status: 200, body: await services.linkedIdKey.revoke(sessionOf(req).accountId, params.projectId) }),
  });
