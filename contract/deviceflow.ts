// Device code flow for command-line tools (spec 2.9, 3.1, 4.1, 4.2; RFC 8628 style),
// and the session-authenticated endpoints behind the consent page /cli/auth.
//
// Grant states: pending → authorized → consumed; pending → expired (600 s);
// pending → denied (our addition). The token endpoint maps them to
// 200 pending / 200 authorized (once) / 410 expired|consumed|denied.
import { z } from 'zod';
import { initContract, commonErrorResponses, described, meta, errorResponse, ROLES } from './common.js';

const c = initContract();

export const DEVICE_CODE_TTL_SECONDS = 600;
export const DEFAULT_POLL_INTERVAL_SECONDS = 5;
/** RFC 8628 §3.5 slow_down: each too-fast poll raises the grant's interval by this much. */
export const SLOW_DOWN_INCREMENT_SECONDS = 5;
export const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';
/** Device codes started per client IP per minute. */
export const DEVICE_CODES_PER_IP_PER_MINUTE = 10;
/** RFC 8628 §5.1: unknown user codes a signed-in user may try per 10 minutes. */
export const UNKNOWN_CODES_PER_USER = 5;
/** Unknown user codes tried from one IP (any users) per 10 minutes. */
export const UNKNOWN_CODES_PER_IP = 20;
export const UNKNOWN_CODE_WINDOW_SECONDS = 600;

export const ClientNameSchema = z
  .string()
  .transform((s) => s.trim())
  .pipe(
    z
      .string()
      .min(1, 'must not be empty')
      .max(64, 'must be at most 64 characters')
      // C0/C1 controls, line/paragraph separators and bidi controls (which could
      // disguise the name on the consent page).
      // eslint-disable-next-line no-control-regex
      .regex(/^[^\u0000-\u001f\u007f-\u009f\u2028\u2029\u200e\u200f\u061c\u202a-\u202e\u2066-\u2069]*$/, 'must not contain control characters'),
  )
  .describe(
    'Human-readable name of the tool, shown on the consent page as chosen by the tool (1–64 characters after trimming; no control or bidi-control characters). The issued key is named `<client_name> (CLI)`.',
  );

export const DeviceCodeRequestSchema = z
  .object({
    // The input is a string (trimmed and checked); say so, since the transform hides the type from the generator.
    client_name: ClientNameSchema.openapi({ type: 'string', minLength: 1, maxLength: 64 }),
  })
  .openapi({ title: 'DeviceCodeRequest', description: 'Starts a grant for the named tool.', example: { client_name: 'acme-deploy' } });

const UserCodeDisplay = z
  .string()
  .regex(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/)
  .openapi({ example: 'BCDF-GHJK' });

export const DeviceCodeGrantSchema = z
  .object({
    device_code: z
      .string()
      .length(64)
      .describe('Opaque secret the tool polls with (64 base64url characters); never shown to the user. The server keeps only its SHA-256.'),
    user_code: UserCodeDisplay.describe(
      '8 letters from BCDFGHJKLMNPQRSTVWXZ as XXXX-XXXX; the tool shows it so the user can compare it on the consent page. Unique among live grants.',
    ),
    verification_url: z.string().url().describe('{base_url}/cli/auth?code=<user_code>'),
    expires_in: z
      .number()
      .int()
      .min(DEVICE_CODE_TTL_SECONDS)
      .max(DEVICE_CODE_TTL_SECONDS)
      .describe(`Seconds until the grant expires: always ${DEVICE_CODE_TTL_SECONDS}`),
    interval: z.number().int().min(1).describe('Minimum seconds between polls'),
  })
  .openapi({ title: 'DeviceCodeGrant', description: 'A new grant (spec 2.9): show `user_code` and `verification_url`, keep `device_code` to poll with.' });

export const TokenRequestSchema = z
  .object({ device_code: z.string().max(1024).describe('The `device_code` of the grant') })
  .openapi({ title: 'TokenRequest', description: 'A poll of a grant.', example: { device_code: 'x'.repeat(64) } });

export const TokenPendingSchema = z
  .object({
    status: z.literal('pending').describe('Not yet authorized'),
    interval: z.number().int().min(1).describe('Seconds to wait before the next poll'),
  })
  .openapi({
    title: 'TokenPending',
    description:
      'Not yet authorized; poll again after `interval` seconds. A poll sooner than `interval` after the previous one still answers pending but raises this grant’s `interval` by 5 seconds for all later polls (RFC 8628 slow_down expressed through this field).',
  });
export const TokenAuthorizedSchema = z
  .object({
    status: z.literal('authorized').describe('Authorized: the key is in `api_key`'),
    api_key: z.string().describe('Plaintext live key, returned exactly once (created at this moment; the server keeps only its hash)'),
  })
  .openapi({ title: 'TokenAuthorized', description: 'The user authorized the grant: here is the key, exactly once.' });
export const TokenEndedSchema = z.object({ status: z.enum(['expired', 'consumed', 'denied']).describe('Why the grant ended') }).openapi({
  title: 'TokenEnded',
  example: { status: 'expired' },
  description:
    '`expired`: the 600 s window elapsed before the key was collected (an authorized grant never polled also expires; no key exists for it). `consumed`: the key was already returned. `denied` (our addition): the user refused on the consent page. In every case start a new grant.',
});

export const GRANT_STATUSES = ['pending', 'authorized', 'consumed', 'denied'] as const;

export const GrantViewSchema = z
  .object({
    userCode: UserCodeDisplay.describe('The code the tool shows its user (XXXX-XXXX)'),
    clientName: z.string().describe('The name the tool sent; self-asserted, not verified'),
    keyName: z.string().describe('Name of the live key approval creates: `<clientName> (CLI)`'),
    status: z
      .enum(GRANT_STATUSES)
      .describe('`pending` awaits a decision. `authorized`, `consumed` (the tool collected its key) and `denied` are shown only to the account that decided.'),
    requestedAt: z.string().datetime().describe('When the tool started the grant'),
    expiresAt: z.string().datetime().describe('End of the 600 s window'),
    requestIp: z.string().describe('IP address the tool started the grant from'),
    requestUserAgent: z.string().nullable().describe('User-Agent header of that request'),
    accountId: z.string().nullable().describe('The account chosen on approval (the key is created there); null otherwise'),
    projectId: z.string().nullable().describe('The project chosen on approval; null otherwise'),
  })
  .openapi({ title: 'DeviceGrant', description: "A command-line tool's request for a key, as its consent page shows it" });

export const GrantAccountSchema = z
  .object({
    id: z.string().describe('The account (acc_…)'),
    role: z.enum(ROLES).describe('Your role in it: one that may create keys (admin or owner)'),
    current: z.boolean().describe("The session's current account: the one approval uses when the request names none"),
    projects: z
      .array(
        z
          .object({ id: z.string().describe('The project (prj_…)'), name: z.string().describe('Its name') })
          .openapi({ title: 'GrantAccountProject', description: 'A project the key may be created in' }),
      )
      .describe("The account's projects, oldest first"),
  })
  .openapi({ title: 'GrantAccount', description: 'An account where the signed-in user may approve a grant, with its projects' });

const UserCodeParam = z.object({
  userCode: z.string().max(64).describe('The user code; any case, with or without the dash (other punctuation and spaces are ignored)'),
});

const grantErrors = {
  ...commonErrorResponses,
  401: errorResponse('not_signed_in', 'Not signed in'),
  404: errorResponse('unknown_user_code', 'Unknown code (counts toward the limit of 5 unknown codes per user per 10 minutes)'),
  410: errorResponse('code_expired', 'The code expired, or another account already used it'),
  429: errorResponse(
    'too_many_attempts',
    'Too many unknown codes tried (5 per signed-in user, 20 per IP, per 10 minutes; RFC 8628 §5.1). Every code lookup is refused until `Retry-After` seconds have passed.',
    { error: 'Too many unknown codes tried; try again later' },
  ),
};
const csrfResponses = {
  403: errorResponse('cross_site_request', "'Cross-site request rejected': Origin (or Referer) is not this service"),
  415: errorResponse('unsupported_media_type', 'The body must be application/json'),
};

export const deviceFlowContract = c.router(
  {
    createDeviceCode: {
      method: 'POST',
      path: '/api/cli/device-code',
      summary: 'Start a device code grant',
      description:
        'The tool shows `user_code` and `verification_url`, then polls `/api/cli/token` every `interval` seconds. The grant lives 600 seconds. The IP address and User-Agent of this request are shown on the consent page.',
      body: DeviceCodeRequestSchema,
      responses: {
        200: described(DeviceCodeGrantSchema, 'The grant is started'),
        ...commonErrorResponses,
        400: errorResponse('validation_failed', '`client_name` missing, empty, longer than 64 characters or containing control characters', {
          error: 'client_name: must not be empty',
        }),
        429: errorResponse(
          'too_many_attempts',
          `More than ${DEVICE_CODES_PER_IP_PER_MINUTE} grants started from this IP in a minute; retry after \`Retry-After\` seconds`,
          { error: 'Too many device codes requested from this address; try again later' },
        ),
      },
      metadata: meta({ auth: 'public' }),
    },
    pollToken: {
      method: 'POST',
      path: '/api/cli/token',
      summary: 'Poll a device code grant for its key',
      description:
        '200 `pending` until the user decides; 200 `authorized` with the key exactly once (concurrent polls: exactly one receives it, the others get 410 `consumed`); 410 `expired`, `consumed` or `denied` end the grant. Responses carry `Cache-Control: no-store`.',
      body: TokenRequestSchema,
      responses: {
        200: described(
          z.discriminatedUnion('status', [TokenPendingSchema, TokenAuthorizedSchema]).openapi({
            discriminator: {
              propertyName: 'status',
              mapping: { pending: '#/components/schemas/TokenPending', authorized: '#/components/schemas/TokenAuthorized' },
            },
          }),
          '`pending`: poll again after `interval` seconds; `authorized`: the key, exactly once',
        ),
        ...commonErrorResponses,
        400: errorResponse('invalid_device_code', 'Unknown or malformed device_code'),
        410: described(TokenEndedSchema, 'The grant ended (`expired`, `consumed` or `denied`): start a new one'),
      },
      metadata: meta({ auth: 'public' }),
    },
    getGrant: {
      method: 'GET',
      path: '/api/cli/grants/:userCode',
      summary: 'A device code grant as the consent page shows it',
      pathParams: UserCodeParam,
      responses: { 200: GrantViewSchema, ...grantErrors },
      metadata: meta({ auth: 'session', role: 'signedIn' }),
    },
    listGrantAccounts: {
      method: 'GET',
      path: '/api/cli/accounts',
      summary: 'The accounts where you may approve a grant, with their projects',
      description:
        "The accounts of the signed-in user where their role may create keys (admin or owner), each with its projects: what the consent page offers. The session's current account first (the default choice), then the others oldest membership first. Accounts where the user has a lower role are not listed.",
      responses: {
        200: z.object({ accounts: z.array(GrantAccountSchema).describe('Where you may approve a grant; empty when nowhere') }),
        ...commonErrorResponses,
        401: errorResponse('not_signed_in', 'Not signed in'),
      },
      metadata: meta({ auth: 'session', role: 'signedIn' }),
    },
    authorizeGrant: {
      method: 'POST',
      path: '/api/cli/grants/:userCode/authorize',
      summary: 'Approve a pending grant for a project of one of your accounts',
      description:
        'The consent page calls this only after the user confirmed that the code matches the terminal. The tool’s next poll then receives a new live key of the project named `<client_name> (CLI)`, source `cli`, in the account named by `accountId` (default the session’s current account). Repeating the same approval answers 200 again. Approving needs a role that may create keys in that account (admin or owner), read from the database on this request whatever account is named, and checked again when the tool polls: a member no longer allowed gets the tool `denied`.',
      pathParams: UserCodeParam,
      body: z
        .object({
          accountId: z
            .string()
            .min(1)
            .max(64)
            .optional()
            .describe("The account the key is created in, one where you are admin or owner (acc_…); absent: the session's current account"),
          projectId: z.string().min(1).max(100).describe('The project of that account the new live key belongs to'),
        })
        .openapi({ title: 'AuthorizeGrantRequest', description: 'Approve the grant for a project of one of your accounts' }),
      responses: {
        200: GrantViewSchema,
        ...grantErrors,
        ...csrfResponses,
        403: errorResponse(
          'role_not_allowed',
          "'Your role does not allow this': your role in the chosen account may not create keys; or 'Cross-site request rejected' (Origin or Referer is not this service)",
        ),
        404: errorResponse(
          'project_not_found',
          "Unknown code, 'Project not found' (not a project of the chosen account), or 'Account not found' (not one of your accounts)",
        ),
        409: errorResponse('already_decided', 'You already decided this grant differently (denied it, or approved it for another project)', {
          error: 'You already denied this request',
        }),
      },
      metadata: meta({ auth: 'session', csrf: true, role: 'admin', accountInBody: true }),
    },
    denyGrant: {
      method: 'POST',
      path: '/api/cli/grants/:userCode/deny',
      summary: 'Refuse a pending grant',
      description:
        'The tool’s next poll answers 410 `{status: "denied"}` and it must start over. Send `{}` as the JSON body. Repeating a denial answers 200 again.',
      pathParams: UserCodeParam,
      body: z.object({}).strict().openapi({ title: 'DenyGrantRequest', description: 'Deny the grant (an empty body)' }),
      responses: {
        200: GrantViewSchema,
        ...grantErrors,
        ...csrfResponses,
        409: errorResponse('already_decided', 'You already approved this grant', { error: 'You already approved this request' }),
      },
      metadata: meta({ auth: 'session', csrf: true, role: 'signedIn' }),
    },
  },
  { strictStatusCodes: true },
);
