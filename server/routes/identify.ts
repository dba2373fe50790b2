import { initServer } from '@ts-rest/express';
import { contract } from '../../contract/index.js';
import { ApiError } from '../errors.js';
import type { RouteDeps } from './deps.js';

const s = initServer();

export const identifyRoutes = (_deps: RouteDeps) =>
  s.router(contract.identify, {
    identify: async () => {
      throw new ApiError(501, 'Not implemented yet');
    },
  });
