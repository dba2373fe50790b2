// Shared pieces of the contract: the error bodies, route metadata and ids.
// Every contract file imports this module first so that `.openapi()` exists.
import { initContract } from '@ts-rest/core';
import { extendZodWithOpenApi } from '@anatine/zod-openapi';
import { z } from 'zod';
import { ERROR_CODES, errorCode } from './errors.js';

extendZodWithOpenApi(z);

// Each contract file calls initContract() itself: exporting `c` breaks declaration emit.
export { initContract };

/**
 * How a route authenticates; enforced by one middleware before the body is
 * validated, so a missing key answers 401 even when the body is also bad.
 * - `public`: nothing.
 * - `browserKey`: `X-API-Key` with an active live or test key (identify).
 * - `secretKey`: `X-API-Key` with an active secret key.
 * - `secretBearer`: `Authorization: Bearer svc_secret_...`.
 * - `anyKey`: `X-API-Key` with any active key (live, test or secret).
 * - `session`: the dashboard session cookie.
 * - `admin`: the session of the instance's administrator (403 for anyone else).
 */
export type AuthKind = 'public' | 'browserKey' | 'secretKey' | 'secretBearer' | 'anyKey' | 'session' | 'admin';

export interface RouteMeta {
  auth: AuthKind;
  /**
   * Dashboard routes that change state with the session cookie (or set it):
   * non-GET requests must be JSON and come from our own origin (CSRF).
   */
  csrf?: boolean;
}

/** Typed route metadata (ts-rest types `metadata` as unknown). */
export const meta = (m: RouteMeta): RouteMeta => m;

export const ErrorSchema = z
  .object({
    error: z.string().describe('What went wrong, for people (the texts of the spec)'),
    code: z.enum(ERROR_CODES).describe('What went wrong, for programs: stable across releases'),
  })
  .openapi({ title: 'Error', description: 'Every error body carries a human-readable `error` and a machine-readable `code`.' });

/**
 * An error response of a route: the error body with the real text this route
 * answers (`error`) and its code as its example.
 */
export function errorResponse(status: number, message: string, description: string) {
  return ErrorSchema.describe(description).openapi({ example: { error: message, code: errorCode(status, message) } });
}

export const RateLimitErrorSchema = z
  .object({
    error: z.string(),
    code: z.enum(['rate_limit_exceeded', 'monthly_quota_exceeded']),
    usage: z.number().int().nonnegative().describe('Requests counted in the current window (second or month).'),
    limit: z.number().int().nonnegative().describe("The plan's limit for that window."),
  })
  .openapi({
    title: 'RateLimitError',
    description:
      "429 body. `error` is 'Rate limit exceeded' (`code` rate_limit_exceeded) for the per-second limit and 'Monthly API call limit exceeded' (`code` monthly_quota_exceeded) for the monthly quota. A `Retry-After` header (seconds) says when to retry.",
    example: { error: 'Monthly API call limit exceeded', code: 'monthly_quota_exceeded', usage: 10000, limit: 10000 },
  });

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

/** Responses every authenticated route can answer besides its own. */
export const commonErrorResponses = {
  400: errorResponse(400, 'Invalid JSON body', 'Malformed JSON or a field that fails validation; `error` names the field.'),
  413: errorResponse(413, 'Request body too large (limit 262144 bytes)', 'Request body larger than the limit.'),
  500: errorResponse(
    500,
    'Internal error (incident rid_01JD0S3V6ZQ8Y0K2W3ZP4X5Y6Z)',
    'Internal error; `error` carries an incident id. Retry with exponential backoff.',
  ),
} as const;
