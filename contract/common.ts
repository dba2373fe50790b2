// Shared pieces of the contract: the error bodies, route metadata and ids.
// Every contract file imports this module first so that `.openapi()` exists.
import { initContract } from '@ts-rest/core';
import { extendZodWithOpenApi } from '@anatine/zod-openapi';
import { z } from 'zod';
import { ERROR_CODES, ERRORS, type ErrorCode, type FixedTextCode } from './errors.js';

extendZodWithOpenApi(z);

// Each contract file calls initContract() itself: exporting `c` breaks declaration emit.
export { initContract };

/**
 * How a route authenticates; enforced by one middleware before the body is
 * validated, so a missing key answers 401 even when the body is also bad.
 * - `public`: nothing.
 * - `browserKey`: `X-API-Key` with an active live or test key (identify).
 * - `secretKey`: an active secret key, in `Authorization: Bearer svc_secret_...`
 *   or in `X-API-Key` (Authorization wins when both are sent).
 * - `anyKey`: any active key (live, test or secret), in either header likewise.
 * - `session`: the dashboard session cookie.
 * - `admin`: the session of the instance's administrator (403 for anyone else).
 */
export type AuthKind = 'public' | 'browserKey' | 'secretKey' | 'anyKey' | 'session' | 'admin';

/**
 * A member's role in an account, strongest first: each role may do what the
 * roles after it may (docs/accounts.md, the roles table).
 * - `owner`: everything, including members, roles, the plan and the account.
 * - `admin`: projects, allowlists, keys, webhooks, sealing, proxy secrets, invitations, visitor deletion.
 * - `analyst`: reads events, visitors and usage; no keys, no secrets, no deletion.
 * - `viewer`: usage and the event list only.
 */
export const ROLES = ['owner', 'admin', 'analyst', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

/**
 * What a session route requires of the signed-in member, in the account it
 * acts on (the path's `:accountId`, or the body's where the route declares
 * `accountInBody`, else the session's current account):
 * at least this role, or `signedIn` (a member of the current account, any role).
 */
export type RoleRequirement = Role | 'signedIn';

interface BaseMeta {
  /**
   * Dashboard routes that change state with the session cookie (or set it):
   * non-GET requests must be JSON and come from our own origin (CSRF).
   */
  csrf?: boolean;
  /**
   * The route accepts a first-party proxy's requests (contract/proxy.ts): with
   * a valid `deviceid-proxy-secret` the middleware takes the client address,
   * host and scheme from the proxy's headers; a wrong or revoked secret is 401.
   */
  proxy?: boolean;
}

interface SessionMeta extends BaseMeta {
  auth: 'session' | 'admin';
  role: RoleRequirement;
  /**
   * The route may name the account it acts on in its JSON body's `accountId`
   * (absent: the session's current account): the role is then checked there,
   * as for a path's `:accountId`.
   */
  accountInBody?: true;
}

/** Every session route declares the role it needs: a route without one does not type-check. */
export type RouteMeta = (BaseMeta & { auth: 'public' | 'browserKey' | 'secretKey' | 'anyKey'; role?: never; accountInBody?: never }) | SessionMeta;

/** Typed route metadata (ts-rest types `metadata` as unknown). */
export const meta = (m: RouteMeta): RouteMeta => m;

/** What openapi/generate.ts puts on a response besides its schema: its description, and for errors an example. */
export interface ResponseDoc {
  description: string;
  example?: unknown;
}

const RESPONSE_DOCS = new WeakMap<object, ResponseDoc>();

/** The description (and example) described() or errorResponse() recorded for a response schema, if any. */
export const responseDoc = (schema: unknown): ResponseDoc | undefined =>
  typeof schema === 'object' && schema !== null ? RESPONSE_DOCS.get(schema) : undefined;

/**
 * A schema used as a response, with the response's own description (and
 * example). Not zod's `.describe()`, which would change the schema, so that
 * a component keeps exactly one definition and every use is a $ref to it:
 * a copy of the schema carries the response's documentation beside it.
 */
export function described<T extends z.ZodTypeAny>(schema: T, description: string, example?: unknown): T {
  const copy = schema.openapi({});
  RESPONSE_DOCS.set(copy, example === undefined ? { description } : { description, example });
  return copy;
}

/** A non-JSON response (`c.otherResponse`) with its description. */
export function describedOther<T extends object>(response: T, description: string): T {
  RESPONSE_DOCS.set(response, { description });
  return response;
}

/** Every stable error code, as its own component so that generated clients get one enum type. */
export const ErrorCodeSchema = z.enum(ERROR_CODES).openapi({
  title: 'ErrorCode',
  description: 'What went wrong, for programs: stable across releases (the list is `ERROR_CODES` in contract/errors.ts; new codes may be added).',
});

export const ErrorDetailSchema = z
  .object({
    path: z.string().describe('Where: `rules[2].expression`, `add[17].value`'),
    message: z.string().describe('What is wrong there'),
    line: z.number().int().min(1).optional().describe('For an expression: the line of the error (1-based)'),
    column: z.number().int().min(1).optional().describe('For an expression: the column of the error (1-based)'),
    offset: z.number().int().nonnegative().optional().describe('For an expression: the offset of the error in the text (0-based)'),
  })
  .openapi({ title: 'ErrorDetail', description: 'One of several errors of a request.' });

const ERROR_DESCRIPTION =
  "Every error body: a human-readable `error` (the spec's texts) and a machine-readable `code`. 429s of identify also carry `usage` and `limit`.";

/** The one error body of every route: each error response references this component. */
export const ErrorSchema = z
  .object({
    error: z.string().describe('What went wrong, for people (the texts of the spec)'),
    code: ErrorCodeSchema,
    usage: z
      .number()
      .int()
      .nonnegative()
      .optional()
      .describe('429 of identify only: requests counted in the current window (the second, or the month for the monthly quota)'),
    limit: z.number().int().nonnegative().optional().describe("429 of identify only: the plan's limit for that window"),
    details: z.array(ErrorDetailSchema).optional().describe('Where a request holds several errors (rules, list entries): each of them'),
  })
  .openapi({ title: 'Error', description: ERROR_DESCRIPTION });

export type ErrorBody = z.infer<typeof ErrorSchema>;

/**
 * An error response of a route: the Error component, described for this
 * route (`description` becomes the response's description), with its code and
 * the real text this route answers as its example. A code whose text the
 * table does not fix needs that text (`example.error`).
 */
export function errorResponse(code: FixedTextCode, description: string, example?: Partial<ErrorBody>): ReturnType<typeof described<typeof ErrorSchema>>;
export function errorResponse(
  code: ErrorCode,
  description: string,
  example: Partial<ErrorBody> & { error: string },
): ReturnType<typeof described<typeof ErrorSchema>>;
export function errorResponse(code: ErrorCode, description: string, example: Partial<ErrorBody> = {}) {
  const { error = (ERRORS[code] as { text?: string }).text, ...rest } = example;
  return described(ErrorSchema, description, { error, code, ...rest });
}

const ulidPattern = '[0-9A-HJKMNP-TV-Z]{26}';
export const RequestIdSchema = z
  .string()
  .regex(new RegExp(`^req_${ulidPattern}$`), 'must be req_ followed by a ULID')
  .openapi({ example: 'req_01JD0S3V6ZQ8Y0K2W3ZP4X5Y6Z' });
export const VisitorIdSchema = z
  .string()
  .regex(new RegExp(`^iq_${ulidPattern}$`), 'must be iq_ followed by a ULID')
  .openapi({ example: 'iq_01JD0S3V6ZQ8Y0K2W3ZP4X5Y6Z' });

export const TimestampMs = z.number().int().nonnegative().describe('Unix time in milliseconds');

/** The latest time a ULID (so a request or visitor id) can carry: 2^48 − 1 ms, in the year 10889. */
export const UNIX_MS_MAX = 2 ** 48 - 1;

const DECIMAL = /^-?\d{1,20}(\.\d{1,20})?$/;
/**
 * An integer query parameter within [min, max], written in decimal digits:
 * an exponent, hex, blanks, `Infinity` or an empty value is refused (400)
 * rather than read the way JavaScript's Number() would. Typed as a number:
 * the typed clients send numbers, which travel as their decimal text.
 */
export const queryInteger = (min: number, max: number) =>
  z.preprocess(
    (v) => (typeof v === 'string' && DECIMAL.test(v) ? Number(v) : v),
    z.number({ invalid_type_error: 'must be an integer in decimal digits' }).int().min(min).max(max),
  ) as unknown as z.ZodType<number, z.ZodTypeDef, number>;

/**
 * A boolean query parameter: `true` or `false` in the query string (how the
 * typed clients send a boolean), anything else is refused (400). Typed and
 * documented as a boolean.
 */
export const queryBoolean = () =>
  z.preprocess((v) => (v === 'true' ? true : v === 'false' ? false : v), z.boolean({ invalid_type_error: 'must be true or false' })) as unknown as z.ZodType<
    boolean,
    z.ZodTypeDef,
    boolean
  >;

/** Responses every authenticated route can answer besides its own. */
export const commonErrorResponses = {
  400: errorResponse('invalid_json', 'Malformed JSON or a field that fails validation; `error` names the field.'),
  413: errorResponse('body_too_large', 'Request body larger than the limit.', { error: 'Request body too large (limit 262144 bytes)' }),
  500: errorResponse('internal_error', 'Internal error; `error` carries an incident id. Retry with exponential backoff.', {
    error: 'Internal error (incident rid_01JD0S3V6ZQ8Y0K2W3ZP4X5Y6Z)',
  }),
} as const;
