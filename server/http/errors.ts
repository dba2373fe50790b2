// The one error middleware: every failure becomes `{error}` with the right
// status. Client errors (4xx) come from ApiError or from any error that
// carries a 4xx `status` (body-parser, Express's path decoding, http-errors);
// their text is ours, never the error's own message, which may echo input.
// A database that cannot be reached, and request bodies over the budget
// (bodyBudget.ts), are 503 with Retry-After. Anything else is
// a 500 whose body carries only an incident id (the request id); the request
// logger writes it once, with the stack, next to that id.
import { STATUS_CODES } from 'node:http';
import type { ErrorRequestHandler, Request, RequestHandler } from 'express';
import type { RequestValidationError } from '@ts-rest/express';
import type { ZodError } from 'zod';
import { ApiError, serviceUnavailable } from '../errors.js';
import { markRefusal } from '../metrics/http.js';
import type { Refusal } from '../metrics/registry.js';
import { isDatabaseUnavailable } from '../store/errors.js';
import { OverBudget } from './bodyBudget.js';

/** `{error: "signals.canvas.value.hash: Required"}`: names the field, never echoes the value. */
export function describeZodError(err: ZodError, where?: string): string {
  const issue = err.issues[0];
  if (!issue) return 'Invalid request';
  const path = issue.path.join('.');
  const field = path || where || 'body';
  return `${field}: ${issue.message}`;
}

export const requestValidationErrorHandler = (err: RequestValidationError, _req: Request, _res: unknown, next: (e: unknown) => void) => {
  const parts: [ZodError | null, string][] = [
    [err.pathParams, 'path'],
    [err.headers, 'headers'],
    [err.query, 'query'],
    [err.body, 'body'],
  ];
  const [zerr, where] = parts.find(([e]) => e !== null) ?? [null, 'request'];
  next(new ApiError('validation_failed', zerr ? describeZodError(zerr, where) : 'Invalid request'));
};

export const notFoundHandler: RequestHandler = (_req, _res, next) => {
  next(new ApiError('not_found'));
};

/** Seconds a client should wait before retrying while the database is away. */
export const DATABASE_RETRY_AFTER_S = 2;

export const databaseUnavailable = () => serviceUnavailable(DATABASE_RETRY_AFTER_S);

interface StatusError {
  status?: unknown;
  statusCode?: unknown;
  type?: unknown;
  limit?: unknown;
}

/** body-parser's error types, by `type` (the only errors with these statuses it raises). */
const BODY_ERRORS: Record<string, (e: StatusError) => ApiError> = {
  'entity.too.large': (e) => new ApiError('body_too_large', `Request body too large (limit ${String(e.limit)} bytes)`),
  'entity.parse.failed': () => new ApiError('invalid_json'),
  'encoding.unsupported': () => new ApiError('unsupported_media_type', 'Unsupported content encoding or charset'),
  'charset.unsupported': () => new ApiError('unsupported_media_type', 'Unsupported content encoding or charset'),
  'request.aborted': () => new ApiError('malformed_body', 'Request aborted'),
};

/** The client error an error stands for, or null when it is not one. */
function clientError(err: unknown): ApiError | null {
  if (err instanceof ApiError) return err;
  if (typeof err !== 'object' || err === null) return null;
  const e = err as StatusError;
  const status = Number(e.status ?? e.statusCode);
  if (!Number.isInteger(status) || status < 400 || status > 499) return null;
  const known = typeof e.type === 'string' ? BODY_ERRORS[e.type] : undefined;
  if (known) return known(e);
  // Express's decode_param: a path parameter with a malformed %-escape.
  if (err instanceof URIError) return new ApiError('malformed_path');
  // body-parser's inflate errors carry zlib's code (corrupt or truncated gzip/deflate).
  if (typeof (err as { code?: unknown }).code === 'string' && (err as { code: string }).code.startsWith('Z_')) {
    return new ApiError('malformed_body', 'Malformed compressed body');
  }
  if (status === 413) return new ApiError('body_too_large', STATUS_CODES[413]!);
  if (status === 415) return new ApiError('unsupported_media_type', STATUS_CODES[415]);
  return new ApiError('bad_request');
}

/** Error codes that turn a request away before it is served (counted by the metrics). */
const REFUSAL_OF: Partial<Record<string, Refusal>> = { rate_limit_exceeded: 'rate_limit', monthly_quota_exceeded: 'monthly_quota' };

export const errorHandler: ErrorRequestHandler = (err: unknown, req, res, _next) => {
  let answer = clientError(err);
  const refusal = answer
    ? REFUSAL_OF[answer.code]
    : isDatabaseUnavailable(err)
      ? 'database_unavailable'
      : err instanceof OverBudget
        ? 'body_budget'
        : undefined;
  if (refusal) markRefusal(res, refusal);
  if (!answer && isDatabaseUnavailable(err)) answer = databaseUnavailable();
  if (!answer && err instanceof OverBudget) answer = serviceUnavailable(1);
  if (!answer) {
    // pino-http logs the response once, at error level, with this error and the request id.
    res.err = err as Error;
    // Our request ids are strings (app.ts); pino-http types them wider.
    answer = new ApiError('internal_error', `Internal error (incident ${typeof req.id === 'object' ? JSON.stringify(req.id) : String(req.id)})`);
  }
  if (res.headersSent) {
    res.end();
    return;
  }
  res.set(answer.headers).status(answer.status).json(answer.body());
};
