// Device code flow handlers: thin adapters from ts-rest to DeviceFlowService.
// Like every API answer, these carry Cache-Control: no-store (see http/app.ts):
// codes and keys must not be cached.
import { initServer } from '@ts-rest/express';
import { contract } from '../../contract/index.js';
import { memberOf, sessionOf } from '../http/context.js';
import type { RouteDeps } from '../services.js';

const s = initServer();

export const deviceFlowRoutes = ({ services }: RouteDeps) =>
  s.router(contract.deviceFlow, {
    createDeviceCode: async ({ body, req }) => {
      const userAgent = req.headers['user-agent'];
      const grant = await services.deviceFlow.start(body.client_name, { ip: services.clientIp(req), userAgent });
      return { status: 200, body: grant };
    },
    pollToken: ({ body }) => services.deviceFlow.poll(body.device_code),
    getGrant: async ({ req, params }) => ({
      status: 200,
      body: await services.deviceFlow.view(sessionOf(req), params.userCode, services.clientIp(req)),
    }),
    listGrantAccounts: async ({ req }) => ({ status: 200, body: { accounts: await services.deviceFlow.accounts(sessionOf(req)) } }),
    authorizeGrant: async ({ req, params, body }) => {
      // The account the middleware checked the role in: the body's accountId, else the current account.
      const { accountId } = memberOf(req);
      const view = await services.deviceFlow.authorize(sessionOf(req), accountId, params.userCode, body.projectId, services.clientIp(req));
      return { status: 200, body: view };
    },
    denyGrant: async ({ req, params }) => ({
      status: 200,
      body: await services.deviceFlow.deny(sessionOf(req), params.userCode, services.clientIp(req)),
    }),
  });
