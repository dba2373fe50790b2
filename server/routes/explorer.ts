// The dashboard's events explorer, hourly counts, visitor timeline and related visitors: thin adapters to ExplorerService (and deletion).
import { initServer } from '@ts-rest/express';
import { contract } from '../../contract/index.js';
import { sessionOf } from '../http/context.js';
import type { RouteDeps } from '../services.js';

const s = initServer();

export const explorerRoutes = ({ services }: RouteDeps) =>
  s.router(contract.explorer, {
    listProjectEvents: async ({ req, params, query }) => ({
      status: 200,
      body: await services.explorer.projectEvents(sessionOf(req).accountId, params.projectId, query),
    }),
    getProjectHourly: async ({ req, params, query }) => ({
      status: 200,
      body: await services.explorer.hourly(sessionOf(req).accountId, params.projectId, query),
    }),
    getVisitorTimeline: async ({ req, params, query }) => ({
      status: 200,
      body: await services.explorer.timeline(sessionOf(req).accountId, params.visitorId, query.before),
    }),
    getProjectRelatedVisitors: async ({ req, params, query }) => ({
      status: 200,
      body: await services.explorer.relatedVisitors(sessionOf(req).accountId, params.projectId, params.visitorId, query),
    }),
    deleteAccountVisitor: async ({ req, params }) => ({
      status: 202,
      body: await services.deletions.request(sessionOf(req).accountId, params.visitorId),
    }),
  });
