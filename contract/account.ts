// The dashboard API: sign-up/sign-in, the account and its plan, projects and
// API keys. Session cookie auth; our design (spec 2.10, 3.2, 5, 8).
import { z } from 'zod';
import { commonErrorResponses, initContract, meta, errorResponse, ROLES } from './common.js';

const c = initContract();

export const PLAN_NAMES = ['free', 'builder', 'growth', 'scale'] as const;

/** What one account can create. */
export const ACCOUNT_LIMITS = {
  projects: 20,
  activeKeysPerProject: 25,
  /** Keys created per account per UTC day (dashboard and device flow): creating and revoking cannot pile up keys. */
  keysPerDay: 100,
  /** Sessions per user; signing in beyond that ends the oldest. */
  sessionsPerUser: 10,
} as const;
export const KEY_TYPES = ['live', 'test', 'secret'] as const;

const isoDate = z.string().datetime();
const Period = z.string().regex(/^\d{4}-(0[1-9]|1[0-2])$/, 'must be a month, YYYY-MM');

export const UserSchema = z
  .object({
    id: z.string().describe('The user (`usr_…`)'),
    email: z.string().email().describe('The address the user signs in with'),
    name: z.string().nullable().describe('The name given at sign-up; null when none was'),
    createdAt: isoDate.describe('When the user signed up'),
  })
  .openapi({ title: 'User', description: 'A person who signs in to the dashboard' });

export const AccountSchema = z
  .object({
    id: z.string().describe('The account (`acc_…`)'),
    plan: z.enum(PLAN_NAMES).describe("The account's plan: it sets the limits below"),
    limits: z
      .object({
        rps: z.number().int().describe('Identify requests per second, across all keys of the account'),
        monthly: z.number().int().describe('Identify calls with live keys per calendar month (UTC)'),
      })
      .describe("The plan's limits"),
    usage: z
      .object({
        period: Period.describe('Calendar month in UTC, YYYY-MM; the quota resets at its end'),
        count: z.number().int().nonnegative().describe('Successful identify calls with live keys this period'),
      })
      .describe("This month's metered use"),
    admin: z.boolean().describe("This account administers the instance (invitations, everyone's plans)"),
    canChangePlan: z.boolean().describe('PUT /api/account/plan is allowed: for the administrator, or for everyone with PLAN_SELF_SERVICE=true'),
  })
  .openapi({ title: 'Account', description: 'What is metered and billed: plan, limits and this month’s use' });

export const PlanSchema = z
  .object({
    name: z.enum(PLAN_NAMES).describe('The plan, as an account names it'),
    rps: z
      .number()
      .int()
      .describe('Identify requests per second, across all keys of an account. Above it: 429 with `Retry-After: 1` (there is no burst allowance)'),
    monthly: z
      .number()
      .int()
      .describe(
        'Identify calls with live keys per calendar month (UTC); test keys never count. Above it: 429 until the month ends (there is no overage: calls are refused, not billed)',
      ),
  })
  .openapi({ title: 'Plan', description: "A plan and its limits, as this instance's operator set them (PLANS)" });

export const UsageSchema = z
  .object({
    period: Period.describe('Calendar month in UTC, YYYY-MM'),
    limit: z.number().int().nonnegative().describe("Monthly quota of the account's current plan (plan history is not kept)"),
    count: z.number().int().nonnegative().describe('Successful identify calls with live keys in the period'),
    testCount: z.number().int().nonnegative().describe('Successful identify calls with test keys in the period (not counted against the quota)'),
    days: z
      .array(
        z
          .object({
            date: z
              .string()
              .regex(/^\d{4}-\d{2}-\d{2}$/)
              .describe('Day in UTC, YYYY-MM-DD'),
            count: z.number().int().nonnegative().describe('Successful identify calls with live keys that day'),
            test: z.number().int().nonnegative().describe('Successful identify calls with test keys that day (not counted against the quota)'),
          })
          .openapi({ title: 'UsageDay', description: 'Identify calls on one day (UTC)' }),
      )
      .describe('One entry per day of the period up to today (UTC); every day of a past month'),
  })
  .openapi({ title: 'Usage', description: 'Identify calls of a month, by day, against the plan' });

export const SessionViewSchema = z
  .object({
    user: UserSchema,
    account: AccountSchema.describe("The session's current account: the one session routes without an `:accountId` act on"),
    role: z.enum(ROLES).describe('The signed-in user’s role in that account'),
  })
  .openapi({ title: 'SessionView', description: 'Who is signed in, their current account and their role in it' });

export const EmailSchema = z.string().trim().toLowerCase().max(254).email();

export const DomainSchema = z
  .string()
  .trim()
  .toLowerCase()
  .max(253)
  .regex(
    /^(\*\.)?(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/,
    'must be a host name such as example.com, or *.example.com for its subdomains',
  );

export const ProjectSchema = z
  .object({
    id: z.string().describe('The project (`prj_…`): what keys, events and visitors belong to'),
    name: z.string().describe('Name shown in the dashboard'),
    allowedDomains: z.array(z.string()).describe('Hosts identify accepts for this project (exact host, or *.example.com for subdomains). Empty: any host.'),
    linkedIdEvidence: z
      .boolean()
      .describe(
        "Whether identification takes the signed-in user's id as evidence: the `linkedId` the site's own server vouches for, which its first-party proxy sends in `deviceid-proxy-linked-id` from the site's session. A visit whose confirmed linkedId was seen on a visitor, with a fingerprint consistent with that visitor's, is recognised even after the device lost its storage on a network it never used. A linkedId alone never joins two devices (people own several, families share accounts), and the `linkedId` a page sends in the identify body is only a tag: anyone can write it. On by default",
      ),
    createdAt: isoDate.describe('When the project was created'),
  })
  .openapi({ title: 'Project', description: 'A site or app: its keys, allowed hosts, events and visitors' });

export const ApiKeySchema = z
  .object({
    id: z.string().describe('The key record (not the key itself)'),
    name: z.string().describe('Descriptive name chosen at creation; keys of the device flow are `<client_name> (CLI)`'),
    type: z.enum(KEY_TYPES).describe('`live` and `test` keys identify (test keys are not metered); `secret` keys call the server API'),
    status: z.enum(['active', 'revoked']).describe('A revoked key answers 401'),
    projectId: z.string().describe('The project the key belongs to'),
    hint: z.string().describe('Prefix and last four characters, e.g. svc_live_…a1B2'),
    createdAt: isoDate.describe('When the key was created (ISO 8601)'),
    lastUsedAt: isoDate.nullable().describe('Updated at most once a minute; null until first used'),
    revokedAt: isoDate.nullable().describe('When it was revoked; null while active'),
    source: z.enum(['dashboard', 'cli']).describe('Created in the dashboard, or issued to a command-line tool by the device code flow'),
  })
  .openapi({ title: 'ApiKey', description: 'An API key record; its plaintext value is shown only once, at creation.' });

const Email = EmailSchema;
const ProjectName = z.string().trim().min(1, 'must not be empty').max(100);
const KeyName = z.string().trim().min(1, 'must not be empty').max(100);

const ROLE_REFUSAL = "'Your role does not allow this': the signed-in member's role in the account is below the route's (see /docs/accounts on the service)";
export const sessionRoutes = {
  ...commonErrorResponses,
  401: errorResponse('not_signed_in', 'Not signed in, or no longer a member of the current account (the session ended)'),
  403: errorResponse('role_not_allowed', ROLE_REFUSAL),
};
/** Answers of state-changing dashboard routes (CSRF protection). */
export const csrfResponses = {
  403: errorResponse('cross_site_request', `'Cross-site request rejected': Origin (or Referer) is not this service; or ${ROLE_REFUSAL}`),
  415: errorResponse('unsupported_media_type', 'The body must be application/json'),
};

export const accountContract = c.router(
  {
    signup: {
      method: 'POST',
      path: '/api/auth/signup',
      summary: 'Create a user and its account (plan free, one "Default project"); signs in',
      description:
        'Who may sign up is set by the operator (SIGNUP): anyone, holders of an invitation, or nobody; the first account of an instance always may, and becomes its administrator. The password must be hard to guess (zxcvbn score 3); its strength is checked only once the per-address limit, the mode and the invitation have admitted the request.',
      body: z
        .object({
          email: Email.describe('The address to sign in with (stored lower-cased)'),
          password: z.string().min(10, 'must be at least 10 characters').max(1024).describe('At least 10 characters and hard to guess (zxcvbn score 3)'),
          name: z.string().trim().max(100).optional().describe('How to address the user; optional'),
          invitation: z
            .string()
            .max(100)
            .optional()
            .describe(
              "The token of an invitation (from its link, /login?invite=…): the administrator's creates a new account; an account's (`dij_…`) joins that account with its role instead",
            ),
        })
        .openapi({ title: 'SignupRequest', description: 'A new user and its account' }),
      responses: {
        201: SessionViewSchema,
        ...commonErrorResponses,
        400: errorResponse('weak_password', "A field fails validation, or 'password: too easy to guess. <why>'", {
          error: 'password: too easy to guess. This is a commonly used password.',
        }),
        ...csrfResponses,
        403: errorResponse(
          'signup_not_allowed',
          "Sign-up is not open to this request (closed, no invitation, or one that is not valid; the error says which), or 'Cross-site request rejected'",
          { error: 'Sign-up is closed on this instance' },
        ),
        409: errorResponse('email_taken', 'Email already registered'),
        429: errorResponse('too_many_attempts', 'Too many sign-ups from this address; retry after `Retry-After` seconds', {
          error: 'Too many sign-ups from this address; try again later',
        }),
        503: errorResponse(
          'service_unavailable',
          'Too many password checks pending at once, or this one took too long (PASSWORD_CHECK_QUEUE, PASSWORD_CHECK_TIMEOUT_MS); retry after `Retry-After` seconds',
        ),
      },
      metadata: meta({ auth: 'public', csrf: true }),
    },
    login: {
      method: 'POST',
      path: '/api/auth/login',
      summary: 'Sign in; sets the session cookie',
      description:
        "The session starts in the account the user last worked in (or the oldest they belong to). With an account's invitation (`dij_…`, for this email) the user first joins that account with the invitation's role, and the session starts there.",
      body: z
        .object({
          email: Email.describe('The address signed up with'),
          password: z.string().max(1024).describe('The password'),
          invitation: z.string().max(100).optional().describe("An account's invitation (`dij_…`) to accept on signing in"),
        })
        .openapi({ title: 'LoginRequest', description: 'Email and password, and an invitation to accept' }),
      responses: {
        200: SessionViewSchema,
        ...commonErrorResponses,
        401: errorResponse('invalid_credentials', "'Invalid email or password'"),
        ...csrfResponses,
        403: errorResponse(
          'no_account',
          "No account left to sign in to (every membership was removed), an invitation that is not valid (the error says why), or 'Cross-site request rejected'",
        ),
        409: errorResponse('already_member', 'The invitation is for an account the user already belongs to'),
        429: errorResponse(
          'too_many_attempts',
          'Too many failed sign-ins for this email from this address, from this address, or for this email; retry after `Retry-After` seconds',
          { error: 'Too many failed sign-in attempts; try again later' },
        ),
      },
      metadata: meta({ auth: 'public', csrf: true }),
    },
    logout: {
      method: 'POST',
      path: '/api/auth/logout',
      summary: 'Sign out: ends the session and clears the cookie',
      body: c.noBody(),
      responses: { 204: c.noBody(), ...sessionRoutes, ...csrfResponses },
      metadata: meta({ auth: 'session', csrf: true, role: 'signedIn' }),
    },
    getAccount: {
      method: 'GET',
      path: '/api/account',
      summary: 'The signed-in user, their account, its limits and this month’s usage',
      responses: { 200: SessionViewSchema, ...sessionRoutes },
      metadata: meta({ auth: 'session', role: 'signedIn' }),
    },
    getUsage: {
      method: 'GET',
      path: '/api/account/usage',
      summary: 'Identify calls with live keys per day of a month, and the monthly quota',
      query: z.object({ period: Period.optional().describe('Calendar month in UTC, YYYY-MM; default the current one') }).openapi({ title: 'UsageQuery' }),
      responses: {
        200: UsageSchema,
        ...sessionRoutes,
        400: errorResponse('validation_failed', "A malformed `period`, or one after the current month: 'period: …'", {
          error: 'period: must not be after the current month',
        }),
      },
      metadata: meta({ auth: 'session', role: 'viewer' }),
    },
    listPlans: {
      method: 'GET',
      path: '/api/plans',
      summary: 'Every plan with its limits',
      description:
        "The plans an account can be on, with the limits this instance applies to each (the defaults, or the operator's PLANS). For any signed-in user: an account's plan and limits are visible to all its members.",
      responses: {
        200: z.object({ plans: z.array(PlanSchema).describe('Every plan, smallest first: ' + PLAN_NAMES.join(', ')) }),
        ...sessionRoutes,
      },
      metadata: meta({ auth: 'session', role: 'signedIn' }),
    },
    setPlan: {
      method: 'PUT',
      path: '/api/account/plan',
      summary: "Switch the account's own plan: the administrator, or anyone with PLAN_SELF_SERVICE=true (no billing)",
      body: z
        .object({ plan: z.enum(PLAN_NAMES).describe('The plan to switch to') })
        .openapi({ title: 'SetPlanRequest', description: "Switch the account's own plan" }),
      responses: {
        200: AccountSchema,
        ...sessionRoutes,
        ...csrfResponses,
        403: errorResponse('plan_change_not_allowed', "'Plans are assigned by the administrator' (or 'Cross-site request rejected')"),
      },
      metadata: meta({ auth: 'session', csrf: true, role: 'owner' }),
    },
    listProjects: {
      method: 'GET',
      path: '/api/projects',
      summary: "The account's projects",
      responses: { 200: z.object({ projects: z.array(ProjectSchema).describe("The account's projects, oldest first") }), ...sessionRoutes },
      metadata: meta({ auth: 'session', role: 'viewer' }),
    },
    createProject: {
      method: 'POST',
      path: '/api/projects',
      summary: `Create a project (at most ${ACCOUNT_LIMITS.projects} per account)`,
      body: z
        .object({
          name: ProjectName.describe('Name shown in the dashboard'),
          allowedDomains: z.array(DomainSchema).max(100).optional().describe('Hosts identify accepts (exact, or *.example.com); none or empty: any host'),
        })
        .openapi({ title: 'CreateProjectRequest', description: 'A new project' }),
      responses: {
        201: ProjectSchema,
        ...sessionRoutes,
        ...csrfResponses,
        409: errorResponse('limit_reached', `The account already has ${ACCOUNT_LIMITS.projects} projects`, {
          error: `An account can have at most ${ACCOUNT_LIMITS.projects} projects`,
        }),
      },
      metadata: meta({ auth: 'session', csrf: true, role: 'admin' }),
    },
    updateProject: {
      method: 'PATCH',
      path: '/api/projects/:projectId',
      summary: 'Rename a project, replace its allowed domains or turn the linkedId evidence on or off',
      body: z
        .object({
          name: ProjectName.optional().describe('A new name; absent: unchanged'),
          allowedDomains: z.array(DomainSchema).max(100).optional().describe('The new list of allowed hosts, replacing the old one; absent: unchanged'),
          linkedIdEvidence: z.boolean().optional().describe('Whether identification takes the linkedId as evidence (see Project); absent: unchanged'),
        })
        .openapi({ title: 'UpdateProjectRequest', description: 'What to change in a project; absent fields stay' }),
      responses: { 200: ProjectSchema, ...sessionRoutes, ...csrfResponses, 404: errorResponse('project_not_found', "'Project not found'") },
      metadata: meta({ auth: 'session', csrf: true, role: 'admin' }),
    },
    listKeys: {
      method: 'GET',
      path: '/api/projects/:projectId/keys',
      summary: "A project's API keys (never their values)",
      responses: {
        200: z.object({ keys: z.array(ApiKeySchema).describe("The project's keys, revoked ones included (never a key's secret)") }),
        ...sessionRoutes,
        404: errorResponse('project_not_found', "'Project not found'"),
      },
      metadata: meta({ auth: 'session', role: 'admin' }),
    },
    createKey: {
      method: 'POST',
      path: '/api/projects/:projectId/keys',
      summary: `Create an API key; its value is returned only in this response (at most ${ACCOUNT_LIMITS.activeKeysPerProject} active per project, ${ACCOUNT_LIMITS.keysPerDay} created per account a day)`,
      body: z
        .object({
          name: KeyName.describe('A name to recognise the key by'),
          type: z.enum(KEY_TYPES).describe('`live` or `test` for the agent (test keys are not metered), `secret` for the server API'),
        })
        .openapi({ title: 'CreateKeyRequest', description: 'A new API key' }),
      responses: {
        201: z.object({ apiKey: ApiKeySchema, key: z.string().describe('The plaintext key. Shown once; store it now.') }),
        ...sessionRoutes,
        ...csrfResponses,
        404: errorResponse('project_not_found', "'Project not found'"),
        409: errorResponse('limit_reached', `The project already has ${ACCOUNT_LIMITS.activeKeysPerProject} active keys; revoke one first`, {
          error: `A project can have at most ${ACCOUNT_LIMITS.activeKeysPerProject} active keys; revoke one first`,
        }),
        429: errorResponse('too_many_attempts', `${ACCOUNT_LIMITS.keysPerDay} keys were created today; retry after \`Retry-After\` seconds`, {
          error: `At most ${ACCOUNT_LIMITS.keysPerDay} keys can be created a day; try again tomorrow`,
        }),
      },
      metadata: meta({ auth: 'session', csrf: true, role: 'admin' }),
    },
    revokeKey: {
      method: 'DELETE',
      path: '/api/projects/:projectId/keys/:keyId',
      summary: 'Revoke an API key (immediately; cannot be undone)',
      body: c.noBody(),
      responses: {
        200: z.object({ apiKey: ApiKeySchema }),
        ...sessionRoutes,
        ...csrfResponses,
        404: errorResponse('key_not_found', "'API key not found'"),
      },
      metadata: meta({ auth: 'session', csrf: true, role: 'admin' }),
    },
  },
  { strictStatusCodes: true },
);
