import { initServer } from '@ts-rest/express';
import { contract } from '../../contract/index.js';
import { VISITS_PAGE_SIZE } from '../../contract/visits.js';
import { ApiError } from '../errors.js';
import { apiKeyOf } from '../http/context.js';
import type { RouteDeps } from '../services.js';

const s = initServer();

export const visitsRoutes = ({ services }: RouteDeps) =>
  s.router(contract.visits, {
    getVisits: async ({ req, params, query }) => {
      // `paginationKey` is the id of the last visit of the previous page: a `before` cursor under event search's name.
      if (query.paginationKey !== undefined && query.before !== undefined) throw new ApiError('invalid_cursor', 'before: give either before or paginationKey');
      const history = await services.visits.history(apiKeyOf(req).accountId, params.visitorId, query.paginationKey ?? query.before);
      const last = history.visits.length === VISITS_PAGE_SIZE ? history.visits[VISITS_PAGE_SIZE - 1] : undefined;
      return { status: 200, body: last ? { ...history, paginationKey: last.id } : history };
    },
  });
