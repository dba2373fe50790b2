// API key format: `svc_<type>_` + 32 random base62 characters + a 6-character
// base62 CRC32 checksum of everything before it. The checksum lets a secret
// scanner (or our auth middleware, before any database read) recognise a real
// key offline, as GitHub's token format does.
import { createHash, randomInt, timingSafeEqual } from 'node:crypto';
import { crc32 } from 'node:zlib';
import type { ApiKeyType } from '../store/apiKeys.js';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const RANDOM_CHARS = 32;
const CHECKSUM_CHARS = 6;
const KEY_RE = /^svc_(live|test|secret)_([0-9A-Za-z]{38})$/;

function base62(n: number, width: number): string {
  let out = '';
  for (let i = 0; i < width; i++) {
    out = BASE62[n % 62] + out;
    n = Math.floor(n / 62);
  }
  return out;
}

function checksum(s: string): string {
  return base62(crc32(s), CHECKSUM_CHARS);
}

function generate(prefix: string): string {
  let body = '';
  // randomInt is a CSPRNG without modulo bias.
  for (let i = 0; i < RANDOM_CHARS; i++) body += BASE62[randomInt(62)];
  const head = prefix + body;
  return head + checksum(head);
}

export function generateKey(type: ApiKeyType): string {
  return generate(`svc_${type}_`);
}

/**
 * A first-party proxy's secret (server/proxy/): an API key's shape under its
 * own prefix, `svc_proxy_`, so that secret scanners recognise it and it is
 * never taken for an API key (parseKey refuses it).
 */
export function generateProxySecret(): string {
  return generate('svc_proxy_');
}

/** The key's type when it is well-formed with a valid checksum, else null. */
export function parseKey(key: string): ApiKeyType | null {
  const m = KEY_RE.exec(key);
  if (!m) return null;
  const head = key.slice(0, key.length - CHECKSUM_CHARS);
  const sum = key.slice(-CHECKSUM_CHARS);
  const expected = checksum(head);
  if (!timingSafeEqual(Buffer.from(sum), Buffer.from(expected))) return null;
  return m[1] as ApiKeyType;
}

export function hashKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** What the dashboard shows: prefix plus the last four characters. */
export function keyHint(key: string): string {
  const prefix = key.slice(0, key.indexOf('_', 4) + 1);
  return `${prefix}…${key.slice(-4)}`;
}
