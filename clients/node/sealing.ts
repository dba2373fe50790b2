// Sealed results: with sealing on for a project, identify answers
// `{sealedResult}` instead of the compact result. The browser forwards the
// blob to your backend, which opens it with the project's sealing key
// (shown once in the dashboard): the browser can neither read nor alter it,
// and your backend needs no API call. A blob proves what the service said,
// not that it was said just now: unseal refuses blobs older than a few
// minutes, and a backend should also refuse a requestId it already accepted.
import { createDecipheriv } from 'node:crypto';
import type { IdentifyResult } from './identify.js';

const MAGIC = Buffer.from([0x64, 0x73, 0x72, 0x01]);
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** Why a blob was refused. */
export type UnsealFailure = 'malformed' | 'rejected' | 'expired';

/**
 * The blob is malformed (`reason` 'malformed'), was altered or sealed with
 * another key ('rejected'), or was sealed too long ago, or too far in the
 * future for the clocks to explain ('expired').
 */
export class UnsealError extends Error {
  constructor(
    message: string,
    readonly reason: UnsealFailure,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'UnsealError';
  }
}

/** How old a sealed result `unseal` accepts by default: 5 minutes. */
export const DEFAULT_MAX_AGE_MS = 5 * 60_000;

export interface UnsealOptions {
  /**
   * Refuse a blob whose server timestamp is further than this from `now`
   * (either way: a blob from the future is a clock problem or a forgery's
   * hint). Default 5 minutes; `Infinity` turns the check off.
   */
  maxAgeMs?: number;
  /** The current Unix ms time (default Date.now()). */
  now?: number;
}

function keyBytes(key: string | Uint8Array): Buffer {
  const bytes = typeof key === 'string' ? Buffer.from(key.trim(), 'base64') : Buffer.from(key);
  if (bytes.length !== 32) throw new TypeError('key must be the 32-byte sealing key (base64, as the dashboard shows it)');
  return bytes;
}

/**
 * Opens a `sealedResult` (base64) with the project's sealing key (base64
 * string or bytes): the identification result the service sealed. Throws
 * UnsealError when the blob is malformed, tampered with, sealed with another
 * key, or older than `maxAgeMs` (default 5 minutes, against the result's
 * server `timestamp`); TypeError when the key is not a sealing key.
 *
 * A fresh blob can still be replayed within that window: a backend that acts
 * on it (a login, a payment) should also refuse a `requestId` it has already
 * accepted.
 */
export function unseal(blob: string, key: string | Uint8Array, options: UnsealOptions = {}): IdentifyResult {
  const k = keyBytes(key);
  const maxAgeMs = options.maxAgeMs ?? DEFAULT_MAX_AGE_MS;
  if (!(maxAgeMs >= 0)) throw new TypeError('maxAgeMs must be a number of milliseconds, 0 or more');
  if (typeof blob !== 'string') throw new UnsealError('sealedResult must be a base64 string', 'malformed');
  const raw = Buffer.from(blob, 'base64');
  if (raw.length < MAGIC.length + IV_BYTES + TAG_BYTES || !raw.subarray(0, MAGIC.length).equals(MAGIC))
    throw new UnsealError('not a sealed result', 'malformed');
  const iv = raw.subarray(MAGIC.length, MAGIC.length + IV_BYTES);
  const tag = raw.subarray(raw.length - TAG_BYTES);
  const body = raw.subarray(MAGIC.length + IV_BYTES, raw.length - TAG_BYTES);
  let plain: Buffer;
  try {
    const decipher = createDecipheriv('aes-256-gcm', k, iv);
    decipher.setAAD(MAGIC);
    decipher.setAuthTag(tag);
    plain = Buffer.concat([decipher.update(body), decipher.final()]);
  } catch (err) {
    throw new UnsealError('sealed result rejected: altered, or sealed with another key', 'rejected', { cause: err });
  }
  const result = JSON.parse(plain.toString('utf8')) as IdentifyResult;
  const age = (options.now ?? Date.now()) - result.timestamp;
  if (!(Math.abs(age) <= maxAgeMs)) {
    const when = age >= 0 ? `${Math.round(age / 1000)} s ago` : `${Math.round(-age / 1000)} s in the future`;
    throw new UnsealError(`sealed result expired: sealed ${when}, more than maxAgeMs (${maxAgeMs} ms) from now`, 'expired');
  }
  return result;
}
