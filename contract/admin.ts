// Administration of the instance, for the administrator's account (the first
// account created): invitations to sign up, and everyone's plans. Our design.
import { z } from 'zod';
import { csrfResponses, EmailSchema, PLAN_NAMES, sessionRoutes } from './account.js';
import { initContract, meta, errorResponse } from './common.js';

const c = initContract();

const isoDate = z.string().datetime();
const adminRoutes = { ...sessionRoutes, 403: errorResponse('admin_only', "'Administrators only' (or 'Cross-site request rejected')") };

export const InvitationSchema = z
  .object({
    id: z.string().describe('The invitation (`inv_…`); its link carries a token, never stored'),
    email: z.string().nullable().describe('Only this address may use it; null: anyone with the link'),
    status: z.enum(['pending', 'used', 'expired', 'revoked']).describe('`pending` until used, expired or revoked'),
    createdAt: isoDate.describe('When the administrator created it'),
    expiresAt: isoDate.describe('After this the link no longer signs anyone up'),
    usedAt: isoDate.nullable().describe('When it was used to sign up; null until then'),
  })
  .openapi({ title: 'Invitation', description: "An administrator's invitation to sign up (a new account)" });

export const AdminAccountSchema = z
  .object({
    id: z.string().describe('The account (`acc_…`)'),
    plan: z.enum(PLAN_NAMES).describe("The account's plan"),
    emails: z.array(z.string()).describe("The account's users"),
    admin: z.boolean().describe('This account administers the instance'),
    createdAt: isoDate.describe('When the account was created'),
  })
  .openapi({ title: 'AdminAccount', description: 'An account of the instance, as its administrator sees it' });

export const adminContract = c.router(
  {
    createInvitation: {
      method: 'POST',
      path: '/api/admin/invitations',
      summary: 'Invite someone to sign up (valid 7 days, for one account); the link is returned only in this response',
      body: z
        .object({ email: EmailSchema.optional().describe('Restrict the invitation to this address') })
        .openapi({ title: 'CreateInvitationRequest', description: 'A new invitation to sign up' }),
      responses: {
        201: z.object({
          invitation: InvitationSchema,
          url: z.string().describe('BASE_URL/login?invite=<token>: send it to the person. Shown once.'),
        }),
        ...adminRoutes,
        415: csrfResponses[415],
      },
      metadata: meta({ auth: 'admin', csrf: true, role: 'admin' }),
    },
    listInvitations: {
      method: 'GET',
      path: '/api/admin/invitations',
      summary: 'Every invitation, newest first (never their links)',
      responses: { 200: z.object({ invitations: z.array(InvitationSchema).describe('Every invitation, newest first') }), ...adminRoutes },
      metadata: meta({ auth: 'admin', role: 'admin' }),
    },
    revokeInvitation: {
      method: 'DELETE',
      path: '/api/admin/invitations/:invitationId',
      summary: 'Withdraw an invitation (an account it already created stays)',
      body: c.noBody(),
      responses: { 200: z.object({ invitation: InvitationSchema }), ...adminRoutes, 404: errorResponse('invitation_not_found', "'Invitation not found'") },
      metadata: meta({ auth: 'admin', csrf: true, role: 'admin' }),
    },
    listAccounts: {
      method: 'GET',
      path: '/api/admin/accounts',
      summary: 'Every account of the instance with its plan and users',
      responses: { 200: z.object({ accounts: z.array(AdminAccountSchema).describe('Every account of the instance') }), ...adminRoutes },
      metadata: meta({ auth: 'admin', role: 'admin' }),
    },
    setAccountPlan: {
      method: 'PUT',
      path: '/api/admin/accounts/:accountId/plan',
      summary: "Assign an account's plan",
      body: z
        .object({ plan: z.enum(PLAN_NAMES).describe("The account's new plan") })
        .openapi({ title: 'AssignPlanRequest', description: "Set an account's plan" }),
      responses: {
        200: AdminAccountSchema,
        ...adminRoutes,
        415: csrfResponses[415],
        404: errorResponse('account_not_found', "'Account not found'"),
      },
      metadata: meta({ auth: 'admin', csrf: true, role: 'admin' }),
    },
  },
  { strictStatusCodes: true },
);
