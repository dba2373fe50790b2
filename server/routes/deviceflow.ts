import { initServer } from '@ts-rest/express';
import { contract } from '../../contract/index.js';
import { ApiError } from '../errors.js';
import type { RouteDeps } from './deps.js';

const s = initServer();

export const deviceFlowRoutes = (_deps: RouteDeps) =>
  s.router(contract.deviceFlow, {
    createDeviceCode: async () => {
      throw new ApiError(501, 'Not implemented yet');
    },
    pollToken: async () => {
      throw new ApiError(501, 'Not implemented yet');
    },
  });
