// The two codes of a grant (RFC 8628 §5.2, §6.1): a device code only the
// tool sees (64 base64url characters, 384 random bits, stored as its
// SHA-256), and a short user code a person compares and may type.
import { createHash, randomBytes, randomInt } from 'node:crypto';
import { USER_CODE_ALPHABET } from '../../contract/deviceflow.js';

const DEVICE_CODE_RE = /^[A-Za-z0-9_-]{64}$/;
const USER_CODE_RE = new RegExp(`^[${USER_CODE_ALPHABET}]{8}$`);

export function generateDeviceCode(): string {
  return randomBytes(48).toString('base64url');
}

export function isWellFormedDeviceCode(code: string): boolean {
  return DEVICE_CODE_RE.test(code);
}

export function hashDeviceCode(code: string): string {
  return createHash('sha256').update(code, 'utf8').digest('hex');
}

/** 8 letters from the base-20 alphabet (no vowels, no digits), no dash: ~34.6 bits. */
export function generateUserCode(): string {
  let code = '';
  // randomInt is a CSPRNG without modulo bias.
  for (let i = 0; i < 8; i++) code += USER_CODE_ALPHABET[randomInt(USER_CODE_ALPHABET.length)];
  return code;
}

/**
 * What a person typed → the stored form (8 letters, no dash), or null when it
 * cannot be a user code. Case-insensitive; the dash, spaces and other
 * punctuation are ignored (RFC 8628 §6.1).
 */
export function normalizeUserCode(input: string): string | null {
  const code = input.toUpperCase().replace(/[^A-Z]/g, '');
  return USER_CODE_RE.test(code) ? code : null;
}

/** `BCDFGHJK` → `BCDF-GHJK`. */
export function displayUserCode(code: string): string {
  return `${code.slice(0, 4)}-${code.slice(4)}`;
}
