// Sealed results: with sealing on for a project, identify answers
// `{sealedResult}` instead of the compact result. The browser forwards the
// blob to your backend, which opens it with the project's sealing key
// (shown once in the dashboard): the browser can neither read nor alter it,
// and your backend needs no API call.
import { createDecipheriv } from 'node:crypto';
import type { IdentifyResult } from './identify.js';

const MAGIC = Buffer.from([0x64, 0x73, 0x72, 0x01]);
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** The blob is malformed, was altered, or the key is not the one it was sealed with. */
export class UnsealError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'UnsealError';
  }
}

function keyBytes(key: string | Uint8Array): Buffer {
  const bytes = typeof key === 'string' ? Buffer.from(key.trim(), 'base64') : Buffer.from(key);
  if (bytes.length !== 32) throw new TypeError('key must be the 32-byte sealing key (base64, as the dashboard shows it)');
  return bytes;
}

/**
 * Opens a `sealedResult` (base64) with the project's sealing key (base64
 * string or bytes): the identification result the service sealed. Throws
 * UnsealError when the blob is malformed, tampered with, or sealed with
 * another key; TypeError when the key is not a sealing key.
 */
export function unseal(blob: string, key: string | Uint8Array): IdentifyResult {
  const k = keyBytes(key);
  if (typeof blob !== 'string') throw new UnsealError('sealedResult must be a base64 string');
  const raw = Buffer.from(blob, 'base64');
  if (raw.length < MAGIC.length + IV_BYTES + TAG_BYTES || !raw.subarray(0, MAGIC.length).equals(MAGIC)) throw new UnsealError('not a sealed result');
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
    throw new UnsealError('sealed result rejected: altered, or sealed with another key', { cause: err });
  }
  return JSON.parse(plain.toString('utf8')) as IdentifyResult;
}
