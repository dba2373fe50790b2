// Teams: the members of an account, their roles, invitations to join, the
// session's current account, and the audit log. Session cookie auth; each
// route declares the role it needs (contract/common.ts). Our design.
import { z } from 'zod';
import { AccountSchema, csrfResponses, EmailSchema, SessionViewSchema, sessionRoutes } from './account.js';
import { JsonObjectSchema } from './identify.js';
import { errorResponse, initContract, meta, queryInteger, ROLES, UNIX_MS_MAX } from './common.js';

const c = initContract();

const isoDate = z.string().datetime();
const RoleSchema = z
  .enum(ROLES)
  .openapi({ title: 'Role', description: 'A role in an account: owner > admin > analyst > viewer (see /docs/accounts on the service)' });
const AccountParams = z.object({ accountId: z.string().max(64) });

/** Days an invitation to an account stays valid. */
export const MEMBER_INVITATION_DAYS = 7;
export const AUDIT_PAGE_MAX = 100;

export const MemberSchema = z
  .object({
    userId: z.string().describe('The user (usr_…)'),
    email: z.string().describe('Their sign-in address'),
    name: z.string().nullable().describe('How to address them; null when not given'),
    role: RoleSchema,
    joinedAt: isoDate.describe('When they became a member (ISO 8601)'),
  })
  .openapi({ title: 'Member', description: 'A member of an account and their role' });

export const MemberInvitationSchema = z
  .object({
    id: z.string().describe('The invitation (minv_…), not its link'),
    email: z.string().describe('Only this address may accept it'),
    role: RoleSchema,
    status: z.enum(['pending', 'used', 'expired', 'revoked']).describe('`pending` until accepted, withdrawn or expired'),
    createdAt: isoDate.describe('When it was created (ISO 8601)'),
    expiresAt: isoDate.describe(`When it stops working, ${MEMBER_INVITATION_DAYS} days after creation (ISO 8601)`),
    usedAt: isoDate.nullable().describe('When it was accepted; null until then'),
  })
  .openapi({ title: 'MemberInvitation', description: 'An invitation to join an account with a role (single use)' });

export const MyAccountSchema = z
  .object({
    id: z.string().describe('The account (acc_…)'),
    plan: AccountSchema.shape.plan,
    role: RoleSchema,
    current: z.boolean().describe("The session's current account"),
    joinedAt: isoDate.describe('When the user joined it (ISO 8601)'),
  })
  .openapi({ title: 'MyAccount', description: 'An account the signed-in user belongs to, with their role in it' });

export const AUDIT_ACTIONS = [
  'account.create',
  'auth.login',
  'auth.login_failed',
  'member.invite',
  'member.invitation_revoke',
  'member.join',
  'member.role',
  'member.remove',
  'plan.change',
  'project.create',
  'project.update',
  'key.create',
  'key.revoke',
  'webhook.create',
  'webhook.rotate_secret',
  'webhook.delete',
  'sealing.key_create',
  'sealing.disable',
  'linked_id_key.create',
  'linked_id_key.revoke',
  'proxy.secret_create',
  'proxy.secret_revoke',
  'visitor.delete',
  'event.update',
  'event.label',
  'ruleset.update',
  'list.create',
  'list.update',
  'list.delete',
  'list.entries',
  'deviceflow.authorize',
  'deviceflow.deny',
  'instance.invitation_create',
  'instance.invitation_revoke',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export const AuditEntrySchema = z
  .object({
    id: z.string().describe('The entry (a ULID of its time)'),
    at: isoDate.describe('When the change happened'),
    action: z.enum(AUDIT_ACTIONS).openapi({ title: 'AuditAction', description: 'What changed: `<area>.<what>`' }),
    actor: z
      .object({
        type: z.enum(['user', 'key', 'anonymous']).describe('`user`: a signed-in member (or who signed in); `key`: an API key; `anonymous`: a failed sign-in'),
        id: z.string().nullable().describe('The user id (usr_…) or the key record id (key_…); null for anonymous'),
        label: z.string().nullable().describe("The user's email, or the key's hint (svc_secret_…a1B2)"),
      })
      .openapi({ title: 'AuditActor', description: 'Who made the change' }),
    target: z
      .object({ type: z.string().describe('project, key, member, invitation, webhook, deletion, event, account, user'), id: z.string().describe('Its id') })
      .nullable()
      .describe('What changed (project, key, member, visitor, …)'),
    ip: z.string().describe('Client address of the request'),
    userAgent: z.string().nullable().describe('User-Agent of the request (at most 512 characters); null when none was sent'),
    before: JsonObjectSchema.nullable().openapi({ type: 'object', 'x-go-type': 'json.RawMessage', description: 'The changed fields before (never a secret)' }),
    after: JsonObjectSchema.nullable().openapi({ type: 'object', 'x-go-type': 'json.RawMessage', description: 'The changed fields after (never a secret)' }),
  })
  .openapi({ title: 'AuditEntry', description: 'One change: who, when, from where, what' });

const memberNotFound = { 404: errorResponse('member_not_found', "'Member not found': unknown, or not a member of this account") };
const invitationNotFound = { 404: errorResponse('invitation_not_found', "'Invitation not found': unknown, or not this account's") };
const accountNotFound = { 404: errorResponse('account_not_found', "'Account not found': no such account, or you are not one of its members") };
const lastOwner = { 409: errorResponse('last_owner', 'The change would leave the account without an owner') };

export const membersContract = c.router(
  {
    listMyAccounts: {
      method: 'GET',
      path: '/api/session/accounts',
      summary: 'The accounts the signed-in user belongs to, with their role in each',
      responses: { 200: z.object({ accounts: z.array(MyAccountSchema).describe('Your accounts, oldest membership first') }), ...sessionRoutes },
      metadata: meta({ auth: 'session', role: 'signedIn' }),
    },
    switchAccount: {
      method: 'PUT',
      path: '/api/session/account',
      summary: "Make another of the user's accounts the session's current account",
      body: z
        .object({ accountId: z.string().max(64).describe('One of your accounts (acc_…)') })
        .openapi({ title: 'SwitchAccountRequest', description: 'The account to work in' }),
      responses: { 200: SessionViewSchema, ...sessionRoutes, ...csrfResponses, ...accountNotFound },
      metadata: meta({ auth: 'session', role: 'signedIn', csrf: true }),
    },
    acceptInvitation: {
      method: 'POST',
      path: '/api/invitations/accept',
      summary: "Join an account with an invitation (`dij_…`, for the signed-in user's email); it becomes the current account",
      body: z
        .object({ invitation: z.string().max(100).describe('The token from the invitation link (dij_…)') })
        .openapi({ title: 'AcceptInvitationRequest', description: 'An invitation to accept' }),
      responses: {
        200: SessionViewSchema,
        ...sessionRoutes,
        ...csrfResponses,
        403: errorResponse(
          'signup_not_allowed',
          'The invitation is not valid (unknown, withdrawn, expired, used, or for another email: the error says which)',
          { error: 'This invitation has expired' },
        ),
        409: errorResponse('already_member', 'Already a member of this account'),
      },
      metadata: meta({ auth: 'session', role: 'signedIn', csrf: true }),
    },
    listMembers: {
      method: 'GET',
      path: '/api/accounts/:accountId/members',
      pathParams: AccountParams,
      summary: "The account's members and their roles",
      responses: { 200: z.object({ members: z.array(MemberSchema).describe("The account's members, oldest first") }), ...sessionRoutes, ...accountNotFound },
      metadata: meta({ auth: 'session', role: 'admin' }),
    },
    changeRole: {
      method: 'PATCH',
      path: '/api/accounts/:accountId/members/:userId',
      pathParams: AccountParams.extend({ userId: z.string().max(64) }),
      summary: "Change a member's role (owners only); takes effect on the member's next request",
      body: z.object({ role: RoleSchema }).openapi({ title: 'ChangeRoleRequest', description: 'The new role' }),
      responses: { 200: MemberSchema, ...sessionRoutes, ...csrfResponses, ...memberNotFound, ...lastOwner },
      metadata: meta({ auth: 'session', role: 'owner', csrf: true }),
    },
    removeMember: {
      method: 'DELETE',
      path: '/api/accounts/:accountId/members/:userId',
      pathParams: AccountParams.extend({ userId: z.string().max(64) }),
      summary: "Remove a member (owners only): their sessions in the account end at once, and the account's pending invitations to their email are withdrawn",
      body: c.noBody(),
      responses: { 200: z.object({ member: MemberSchema }), ...sessionRoutes, ...csrfResponses, ...memberNotFound, ...lastOwner },
      metadata: meta({ auth: 'session', role: 'owner', csrf: true }),
    },
    createMemberInvitation: {
      method: 'POST',
      path: '/api/accounts/:accountId/invitations',
      pathParams: AccountParams,
      summary: `Invite someone by email with a role (valid ${MEMBER_INVITATION_DAYS} days, used once); the link is returned only in this response`,
      description:
        'Owners may invite any role, admins any role but owner. Accepting it signs up (a new user) or signs in (an existing one), and joins the account. An email that is already a member is refused (409).',
      body: z
        .object({ email: EmailSchema.describe('Who may accept it (stored lower-cased)'), role: RoleSchema })
        .openapi({ title: 'CreateMemberInvitationRequest', description: 'Whom to invite, with which role' }),
      responses: {
        201: z.object({
          invitation: MemberInvitationSchema,
          url: z.string().describe('BASE_URL/login?invite=dij_…: send it to the person. Shown once.'),
        }),
        ...sessionRoutes,
        ...csrfResponses,
        ...accountNotFound,
        409: errorResponse('already_member', 'The email is already a member of this account'),
      },
      metadata: meta({ auth: 'session', role: 'admin', csrf: true }),
    },
    listMemberInvitations: {
      method: 'GET',
      path: '/api/accounts/:accountId/invitations',
      pathParams: AccountParams,
      summary: "The account's invitations, newest first (never their links)",
      responses: {
        200: z.object({ invitations: z.array(MemberInvitationSchema).describe("The account's invitations, newest first") }),
        ...sessionRoutes,
        ...accountNotFound,
      },
      metadata: meta({ auth: 'session', role: 'admin' }),
    },
    revokeMemberInvitation: {
      method: 'DELETE',
      path: '/api/accounts/:accountId/invitations/:invitationId',
      pathParams: AccountParams.extend({ invitationId: z.string().max(64) }),
      summary: 'Withdraw an invitation (a member it already admitted stays)',
      body: c.noBody(),
      responses: { 200: z.object({ invitation: MemberInvitationSchema }), ...sessionRoutes, ...csrfResponses, ...invitationNotFound },
      metadata: meta({ auth: 'session', role: 'admin', csrf: true }),
    },
    listAudit: {
      method: 'GET',
      path: '/api/accounts/:accountId/audit',
      pathParams: AccountParams,
      summary: "The account's audit log, newest first: who changed what, when, from where",
      description:
        'Every change made through the dashboard, the administration routes, the device flow and the server API (keys) is recorded when it happens, kept AUDIT_RETENTION_DAYS (at least 400). Pass the `paginationKey` of an answer back, with the same filters, for the next page.',
      query: z
        .object({
          member: z.string().max(64).optional().describe('Only changes made by this user (usr_…)'),
          action: z.enum(AUDIT_ACTIONS).optional().describe('Only this action'),
          start: queryInteger(0, UNIX_MS_MAX).optional().describe('Only entries at or after this Unix ms time'),
          end: queryInteger(0, UNIX_MS_MAX).optional().describe('Only entries at or before this Unix ms time'),
          limit: queryInteger(1, AUDIT_PAGE_MAX).default(50).describe(`Entries per page, 1–${AUDIT_PAGE_MAX}`),
          paginationKey: z.string().max(200).optional().describe('The `paginationKey` of the previous page, for the next one'),
        })
        .strict()
        .openapi({ title: 'AuditQuery' }),
      responses: {
        200: z
          .object({
            entries: z.array(AuditEntrySchema).describe('At most `limit` entries, newest first'),
            paginationKey: z.string().optional().describe('Present when there may be more entries: the `paginationKey` of the next page'),
          })
          .openapi({ title: 'AuditPage', description: 'A page of the audit log' }),
        ...sessionRoutes,
        400: errorResponse('validation_failed', 'A filter that fails validation, or a paginationKey this endpoint did not return', {
          error: 'paginationKey: not a key this endpoint returned',
        }),
        ...accountNotFound,
      },
      metadata: meta({ auth: 'session', role: 'admin' }),
    },
  },
  { strictStatusCodes: true },
);
