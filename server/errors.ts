// The one error type handlers and modules throw. Its message is what the
// client sees, so never put internal detail in it; 5xx are built by the error
// middleware with an incident id instead. Its body is `{error, code, ...extra}`.
import { errorCode, type ErrorCode } from '../contract/errors.js';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** Extra fields of the error body (e.g. usage/limit on 429). */
    readonly extra: Record<string, unknown> = {},
    /** Extra response headers (e.g. Retry-After). */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }

  /** The stable machine-readable code of this error (contract/errors.ts). */
  get code(): ErrorCode {
    return errorCode(this.status, this.message);
  }

  body(): Record<string, unknown> {
    return { error: this.message, code: this.code, ...this.extra };
  }
}
