// Administration handlers: thin adapters from ts-rest to AdminService.
import { initServer } from '@ts-rest/express';
import { contract } from '../../contract/index.js';
import { sessionOf } from '../http/context.js';
import type { RouteDeps } from '../services.js';

const s = initServer();

export const adminRoutes = ({ services }: RouteDeps) =>
  s.router(contract.admin, {
    createInvitation: async ({ req, body }) => ({ status: 201, body: await services.admin.invite(sessionOf(req), body.email) }),
    listInvitations: async () => ({ status: 200, body: { invitations: await services.admin.invitations() } }),
    revokeInvitation: async ({ req, params }) => ({
      status: 200,
      body: { invitation: await services.admin.revokeInvitation(sessionOf(req), params.invitationId) },
    }),
    listAccounts: async () => ({ status: 200, body: { accounts: await services.admin.accounts() } }),
    setAccountPlan: async ({ params, body }) => ({ status: 200, body: await services.admin.setPlan(params.accountId, body.plan) }),
  });
