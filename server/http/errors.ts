// The one error middleware: every failure becomes `{error}` with the right
// status. 5xx answers carry only an incident id (the request id), which is
// also in the log next to the real error.
import type { ErrorRequestHandler, Request, RequestHandler } from 'express';
import type { RequestValidationError } from '@ts-rest/express';
import type { ZodError } from 'zod';
import { ApiError } from '../errors.js';

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
  next(new ApiError(400, zerr ? describeZodError(zerr, where) : 'Invalid request'));
};

export const notFoundHandler: RequestHandler = (_req, _res, next) => {
  next(new ApiError(404, 'Not found'));
};

interface BodyParserError extends Error {
  type?: string;
  status?: number;
  limit?: number;
}

export const errorHandler: ErrorRequestHandler = (err: unknown, req, res, _next) => {
  let status = 500;
  let body: Record<string, unknown>;
  let headers: Record<string, string> = {};
  const bp = err as BodyParserError;
  if (err instanceof ApiError) {
    status = err.status;
    body = err.body();
    headers = err.headers;
  } else if (bp?.type === 'entity.too.large') {
    status = 413;
    body = { error: `Request body too large (limit ${bp.limit} bytes)` };
  } else if (bp?.type === 'entity.parse.failed') {
    status = 400;
    body = { error: 'Invalid JSON body' };
  } else if (bp?.type === 'encoding.unsupported' || bp?.type === 'charset.unsupported') {
    status = 415;
    body = { error: 'Unsupported content encoding or charset' };
  } else if (bp?.type === 'request.aborted') {
    status = 400;
    body = { error: 'Request aborted' };
  } else {
    body = { error: `Internal error (incident ${String(req.id)})` };
  }
  if (status >= 500) {
    req.log?.error({ err, incident: req.id }, 'request failed');
  }
  if (res.headersSent) {
    res.end();
    return;
  }
  res.set(headers).status(status).json(body);
};
