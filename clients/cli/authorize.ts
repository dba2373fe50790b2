// The device code flow from the tool's side (spec 3.1, 4.1, 4.2; RFC 8628 §3.4–3.5):
// start a grant, show the code, poll until the user decides, return the key.
import { deviceFlowContract } from '@deviceid/contract';
import { AbortedError, DeviceIdError, NetworkError, RateLimitError, ServerError, TimeoutError, UnexpectedResponseError } from '@deviceid/client';
import { createRawClient, errorFromResponse, parseRetryAfter, sleep, unwrap, type FetchLike } from '@deviceid/client/internal';
import { isWebUrl, openInBrowser } from './browser.js';
import { GrantConsumedError, GrantDeniedError, GrantExpiredError } from './errors.js';

export interface Verification {
  /** Page where the user signs in, checks the code and approves. */
  verificationUrl: string;
  /** `XXXX-XXXX`: show it; the user compares it with the consent page. */
  userCode: string;
  /** When the grant ends (local clock). */
  expiresAt: Date;
}

export interface AuthorizeDeviceOptions {
  /** Where the service runs, e.g. `https://deviceid.example.com`. */
  baseUrl: string;
  /** Name shown on the consent page; the key is named `<clientName> (CLI)`. 1–64 characters. */
  clientName: string;
  /** Show the URL and code to the user. Polling starts when it returns (or its promise resolves). */
  onVerification: (verification: Verification) => void | Promise<void>;
  /** Cancels the flow at any point; the promise rejects with AbortedError. */
  signal?: AbortSignal;
  /** `true`: open the URL with the system browser after onVerification; or your own opener. Failures are ignored. Default false. */
  openBrowser?: boolean | ((url: string) => void | Promise<void>);
  /** A `fetch` implementation (proxies, tests). */
  fetch?: FetchLike;
  /** Milliseconds one request may take. Default 10 000. */
  timeoutMs?: number;
  /** Consecutive failed polls (network, timeout, 5xx) tolerated before giving up. Default 5. */
  maxPollFailures?: number;
  /** Told about each poll outcome that keeps the flow going (for progress displays). */
  onPoll?: (state: PollState) => void;
}

export type PollState = { status: 'pending'; interval: number } | { status: 'retrying'; error: DeviceIdError; failures: number; waitMs: number };

export interface AuthorizeDeviceResult {
  /** The new live key. Store it; it is never shown again. */
  apiKey: string;
}

/** Added to the interval when the server answers 429 to a poll (RFC 8628 slow_down). */
const SLOW_DOWN_SECONDS = 5;
const MAX_FAILURE_WAIT_MS = 60_000;

type Grant = { device_code: string; user_code: string; verification_url: string; expires_in: number; interval: number };

function checkGrant(body: unknown): Grant {
  const g = body as Partial<Grant> | null;
  const ok =
    g !== null &&
    typeof g === 'object' &&
    typeof g.device_code === 'string' &&
    g.device_code.length > 0 &&
    typeof g.user_code === 'string' &&
    typeof g.verification_url === 'string' &&
    typeof g.expires_in === 'number' &&
    g.expires_in > 0 &&
    typeof g.interval === 'number' &&
    g.interval > 0;
  if (!ok) throw new UnexpectedResponseError('unexpected_response', 'POST /api/cli/device-code answered with an incomplete grant');
  // Never show or open anything but a web page the server names (RFC 8628 §5.4; gh BrowseURL).
  if (!isWebUrl(g.verification_url!)) {
    throw new UnexpectedResponseError('unexpected_response', 'POST /api/cli/device-code answered with a verification_url that is not http(s)');
  }
  return g as Grant;
}

/**
 * Runs the device code flow and resolves with the issued key.
 *
 * Rejects with GrantDeniedError, GrantExpiredError (also when the grant's
 * time runs out locally), GrantConsumedError, AbortedError (the signal),
 * ValidationError (bad clientName, or the server does not know the device
 * code), RateLimitError (too many grants started), or the last NetworkError /
 * TimeoutError / ServerError once `maxPollFailures` polls in a row failed.
 */
export async function authorizeDevice(options: AuthorizeDeviceOptions): Promise<AuthorizeDeviceResult> {
  const { clientName, onVerification, signal, openBrowser = false, onPoll } = options;
  const maxPollFailures = options.maxPollFailures ?? 5;
  if (typeof onVerification !== 'function') throw new TypeError('onVerification must be a function');
  if (typeof clientName !== 'string') throw new TypeError('clientName must be a string');
  if (signal?.aborted) throw new AbortedError('aborted', 'Aborted', { cause: signal.reason });

  const raw = createRawClient({ deviceFlow: deviceFlowContract }, { baseUrl: options.baseUrl, fetch: options.fetch, timeoutMs: options.timeoutMs }, () => ({}));
  const grant = checkGrant(await unwrap(() => raw.deviceFlow.createDeviceCode({ body: { client_name: clientName }, call: { signal } })));
  const expiresAtMs = Date.now() + grant.expires_in * 1000;

  // One signal for the rest of the flow: the caller's, or the grant's end.
  const expiry = new AbortController();
  const expiryTimer = setTimeout(() => expiry.abort(new GrantExpiredError()), expiresAtMs - Date.now());
  const flow = signal ? AbortSignal.any([signal, expiry.signal]) : expiry.signal;
  const ended = (err: unknown): unknown => {
    if (signal?.aborted) return err instanceof AbortedError ? err : new AbortedError('aborted', 'Aborted', { cause: signal.reason });
    if (expiry.signal.aborted) return expiry.signal.reason;
    return err;
  };

  try {
    await raceAbort(
      Promise.resolve(onVerification({ verificationUrl: grant.verification_url, userCode: grant.user_code, expiresAt: new Date(expiresAtMs) })),
      flow,
    );
    if (openBrowser) {
      const open = typeof openBrowser === 'function' ? openBrowser : (url: string) => openInBrowser(url);
      // The URL was shown already; a browser that will not start changes nothing.
      await Promise.resolve()
        .then(() => open(grant.verification_url))
        .catch(() => undefined);
    }

    let intervalMs = grant.interval * 1000;
    let waitMs = intervalMs;
    let failures = 0;
    for (;;) {
      await sleep(waitMs, flow);
      const remaining = expiresAtMs - Date.now();
      let res: { status: number; body: unknown; headers: Headers };
      try {
        res = await raw.deviceFlow.pollToken({
          body: { device_code: grant.device_code },
          // The poll loop does its own retrying; a POST that may have been
          // answered is never replayed blindly (it could consume the key).
          call: { signal: flow, retries: 0, timeoutMs: Math.max(1, Math.min(options.timeoutMs ?? 10_000, remaining)) },
        });
      } catch (err) {
        if (flow.aborted) throw ended(err);
        if (!(err instanceof NetworkError || err instanceof TimeoutError)) {
          // Undeclared statuses (a proxy's 502/503) arrive here.
          const r = (err as { response?: { status: number; body: unknown; headers: Headers } }).response;
          if (!r) throw err;
          res = r;
        } else {
          failures++;
          if (failures > maxPollFailures) throw err;
          waitMs = Math.min(MAX_FAILURE_WAIT_MS, intervalMs * 2 ** (failures - 1));
          onPoll?.({ status: 'retrying', error: err, failures, waitMs });
          continue;
        }
      }

      if (res.status === 200) {
        const body = res.body as { status?: unknown; interval?: unknown; api_key?: unknown };
        if (body?.status === 'authorized' && typeof body.api_key === 'string' && body.api_key.length > 0) return { apiKey: body.api_key };
        if (body?.status === 'pending') {
          failures = 0;
          // The server raises the interval when we poll too fast (slow_down); never go below what it asks.
          if (typeof body.interval === 'number' && body.interval * 1000 > intervalMs) intervalMs = body.interval * 1000;
          waitMs = intervalMs;
          onPoll?.({ status: 'pending', interval: intervalMs / 1000 });
          continue;
        }
        throw new UnexpectedResponseError('unexpected_response', 'POST /api/cli/token answered 200 with an unknown status', {
          status: 200,
          headers: res.headers,
          request: 'POST /api/cli/token',
        });
      }
      const details = { status: res.status, body: res.body, headers: res.headers, request: 'POST /api/cli/token' };
      if (res.status === 410) {
        const status = (res.body as { status?: unknown } | undefined)?.status;
        if (status === 'denied') throw new GrantDeniedError(details);
        if (status === 'consumed') throw new GrantConsumedError(details);
        throw new GrantExpiredError(details);
      }
      if (res.status === 429) {
        // Not in the contract for polls, but a proxy may say it: slow down for good.
        intervalMs += SLOW_DOWN_SECONDS * 1000;
        waitMs = Math.max(intervalMs, parseRetryAfter(res.headers.get('retry-after')) ?? 0);
        onPoll?.({ status: 'retrying', error: new RateLimitError('POST /api/cli/token was rate limited', details, undefined), failures, waitMs });
        continue;
      }
      if (res.status >= 500) {
        failures++;
        const err = new ServerError('server', `POST /api/cli/token failed with ${res.status}`, details);
        if (failures > maxPollFailures) throw err;
        waitMs = Math.min(MAX_FAILURE_WAIT_MS, intervalMs * 2 ** (failures - 1));
        onPoll?.({ status: 'retrying', error: err, failures, waitMs });
        continue;
      }
      // 400 (unknown device code) and anything else: the typed error, no retry.
      throw errorFromResponse(res, 'POST /api/cli/token', 1);
    }
  } catch (err) {
    throw ended(err);
  } finally {
    clearTimeout(expiryTimer);
  }
}

/** Rejects as soon as the signal fires, even if `p` never settles. */
function raceAbort<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  // The signal's reason is an Error (an AbortError or TimeoutError DOMException) unless the caller chose otherwise.
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e) => {
        signal.removeEventListener('abort', onAbort);
        reject(e as Error);
      },
    );
  });
}
