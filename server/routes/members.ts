// Teams: thin adapters from ts-rest to the members and accounts services.
// Who may call each route is its `role` metadata, checked by the auth middleware.
import { initServer } from '@ts-rest/express';
import { contract } from '../../contract/index.js';
import { memberOf, sessionOf } from '../http/context.js';
import type { RouteDeps } from '../services.js';

const s = initServer();

export const membersRoutes = ({ services }: RouteDeps) =>
  s.router(contract.members, {
    listMyAccounts: async ({ req }) => ({ status: 200, body: { accounts: await services.accounts.myAccounts(sessionOf(req)) } }),
    switchAccount: async ({ req, body }) => ({ status: 200, body: await services.accounts.switchAccount(sessionOf(req), body.accountId) }),
    acceptInvitation: async ({ req, body }) => ({ status: 200, body: await services.accounts.acceptInvitation(sessionOf(req), body.invitation) }),
    listMembers: async ({ params }) => ({ status: 200, body: { members: await services.members.list(params.accountId) } }),
    changeRole: async ({ params, body }) => ({ status: 200, body: await services.members.changeRole(params.accountId, params.userId, body.role) }),
    removeMember: async ({ params }) => ({ status: 200, body: { member: await services.members.remove(params.accountId, params.userId) } }),
    createMemberInvitation: async ({ req, params, body }) => {
      const { userId, role } = memberOf(req);
      return { status: 201, body: await services.members.invite(params.accountId, { userId, role }, body.email, body.role) };
    },
    listMemberInvitations: async ({ params }) => ({ status: 200, body: { invitations: await services.members.invitations(params.accountId) } }),
    revokeMemberInvitation: async ({ params }) => ({
      status: 200,
      body: { invitation: await services.members.revokeInvitation(params.accountId, params.invitationId) },
    }),
    listAudit: async ({ params, query }) => ({ status: 200, body: await services.audit.page(params.accountId, query) }),
  });
