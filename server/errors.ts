// The one error type handlers and modules throw, by code: its status and,
// where fixed, its text come from the one table in contract/errors.ts. Its
// message is what the client sees, so never put internal detail in it; 5xx
// are built by the error middleware with an incident id instead. Its body is
// `{error, code, ...extra}`.
import { ERRORS, type ErrorCode, type FixedTextCode } from '../contract/errors.js';

export class ApiError extends Error {
  readonly status: number;

  constructor(code: FixedTextCode, text?: string, extra?: Record<string, unknown>, headers?: Record<string, string>);
  constructor(code: ErrorCode, text: string, extra?: Record<string, unknown>, headers?: Record<string, string>);
  constructor(
    readonly code: ErrorCode,
    text?: string,
    /** Extra fields of the error body (e.g. usage/limit on 429). */
    readonly extra: Record<string, unknown> = {},
    /** Extra response headers (e.g. Retry-After). */
    readonly headers: Record<string, string> = {},
  ) {
    const entry: { status: number; text?: string } = ERRORS[code];
    super(text ?? entry.text ?? code);
    this.name = 'ApiError';
    this.status = entry.status;
  }

  body(): Record<string, unknown> {
    return { error: this.message, code: this.code, ...this.extra };
  }
}

/** 503 with the seconds a client should wait before retrying (the database away, the cluster primary silent, request bodies over the budget). */
export const serviceUnavailable = (retryAfterS: number) => new ApiError('service_unavailable', undefined, {}, { 'Retry-After': String(retryAfterS) });
