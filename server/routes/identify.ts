import { initServer } from '@ts-rest/express';
import { contract } from '../../contract/index.js';
import { ApiError } from '../errors.js';
import type { AppDeps } from '../http/app.js';

const s = initServer();

export const identifyRoutes = (_deps: AppDeps) =>
  s.router(contract.identify, {
    identify: async () => {
      throw new ApiError(501, 'Not implemented yet');
    },
  });
