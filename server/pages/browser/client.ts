// Page scripts call our API only through this ts-rest client of the
// contract, with the cookies of this origin (the server checks Origin on every
// state-changing call: the CSRF rule). A network failure becomes an answer
// like any other, status 0 with an {error, code} body, shown next to the
// control that caused it.
import { initClient, tsRestFetchApi } from '@ts-rest/core';
import type { ErrorCode } from '../../../contract/errors.js';
import { routes } from './routes.js';

const options = {
  baseUrl: '',
  baseHeaders: {},
  credentials: 'same-origin' as const,
  api: async (args: Parameters<typeof tsRestFetchApi>[0]) => {
    try {
      return await tsRestFetchApi(args);
    } catch {
      const body: ErrorBody = { error: 'Could not reach the server. Check your connection and try again.', code: 'service_unavailable' };
      return { status: 0, body, headers: new Headers() };
    }
  },
};

// Pure: a bundle that imports this module only for its helpers (decisions.js, handed the client by
// dashboard.js) leaves the client, and with it ts-rest and the routes, out.
export const api = /* @__PURE__ */ initClient(routes, options);

/** The contract's error body (ErrorSchema). */
export interface ErrorBody {
  error: string;
  code: ErrorCode;
}

/** Any answer of a page client. */
export interface Answer {
  status: number;
  body: unknown;
  headers?: Headers;
}

export function errorBody(res: Answer): ErrorBody | null {
  const b = res.body as Partial<ErrorBody> | null;
  return b && typeof b.error === 'string' ? { error: b.error, code: b.code ?? 'internal_error' } : null;
}

/** The `error` text of a failed answer, or its status when the body is not ours (a proxy's page). */
export const errorText = (res: Answer): string => errorBody(res)?.error ?? `Something went wrong (${res.status})`;

/** Seconds the server asked to wait (Retry-After), if it did. */
export function retryAfter(res: Answer): number | null {
  const s = Number(res.headers?.get('retry-after'));
  return Number.isFinite(s) && s > 0 ? s : null;
}

/** Sign-in, then back to `path`. */
export const toLogin = (path = location.pathname + location.search): void => location.assign(`/login?next=${encodeURIComponent(path)}`);
