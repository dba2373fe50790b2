import { initServer } from '@ts-rest/express';
import { contract } from '../../contract/index.js';
import { ApiError } from '../errors.js';
import type { RouteDeps } from './deps.js';

const s = initServer();

export const visitsRoutes = (_deps: RouteDeps) =>
  s.router(contract.visits, {
    getVisits: async () => {
      throw new ApiError(501, 'Not implemented yet');
    },
  });
