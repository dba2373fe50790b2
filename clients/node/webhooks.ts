// Verifying webhook deliveries on your backend. Each delivery is a POST of
// the full event (JSON) with
//   deviceid-signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>
// Verify the raw body exactly as received (before any JSON parsing), with
// the endpoint's signing secret (`whsec_…`, shown once in the dashboard).
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { FullEvent } from './server.js';

export const WEBHOOK_SIGNATURE_HEADER = 'deviceid-signature';

/** The signature is missing, malformed, wrong, or its timestamp is outside the tolerance (a replay). */
export class WebhookVerificationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookVerificationError';
  }
}

export interface VerifyWebhookOptions {
  /** Largest accepted distance between the signature's timestamp and now, in seconds. Default 300. */
  toleranceSeconds?: number;
  /** Now, in Unix ms (tests). Default Date.now(). */
  now?: number;
}

/**
 * Checks a delivery's signature and returns the event it carries. Throws
 * WebhookVerificationError when the header is missing or malformed, no `v1`
 * signature matches (compared in constant time), or `t` is more than
 * `toleranceSeconds` from now.
 */
export function verifyWebhook(
  rawBody: string | Uint8Array,
  header: string | string[] | null | undefined,
  secret: string,
  options: VerifyWebhookOptions = {},
): FullEvent {
  if (typeof secret !== 'string' || secret === '') throw new TypeError('secret must be the endpoint signing secret');
  const { toleranceSeconds = 300, now = Date.now() } = options;
  const value = Array.isArray(header) ? header.join(',') : header;
  if (typeof value !== 'string' || value.trim() === '') throw new WebhookVerificationError(`Missing ${WEBHOOK_SIGNATURE_HEADER} header`);
  let t: number | null = null;
  const signatures: Buffer[] = [];
  for (const part of value.split(',')) {
    const eq = part.indexOf('=');
    const k = part.slice(0, eq).trim();
    const v = part.slice(eq + 1).trim();
    if (k === 't' && /^\d{1,12}$/.test(v)) t = Number(v);
    if (k === 'v1' && /^[0-9a-f]{64}$/.test(v)) signatures.push(Buffer.from(v, 'hex'));
  }
  if (t === null || signatures.length === 0) throw new WebhookVerificationError(`Malformed ${WEBHOOK_SIGNATURE_HEADER} header`);
  const body = typeof rawBody === 'string' ? Buffer.from(rawBody) : Buffer.from(rawBody);
  const expected = createHmac('sha256', secret).update(`${t}.`).update(body).digest();
  if (!signatures.some((s) => timingSafeEqual(s, expected))) throw new WebhookVerificationError('Signature does not match');
  if (Math.abs(now / 1000 - t) > toleranceSeconds) throw new WebhookVerificationError('Timestamp outside the tolerance (replayed or delayed delivery)');
  try {
    return JSON.parse(body.toString('utf8')) as FullEvent;
  } catch {
    throw new WebhookVerificationError('Body is not JSON');
  }
}
