// Sign-in throttling (OWASP Authentication Cheat Sheet): limits on attempts,
// reserved before the password is checked (see store/attempts.ts), so that
// concurrent guesses cannot outrun them.
//
// - Per email and client address: 5 attempts per 15 minutes. A guesser is
//   stopped quickly, and only where they are.
// - Per client address, over all emails: 20 per 15 minutes (password spraying).
// - Per email from anywhere: 20 per hour, a slower back-off against guessing
//   from many addresses.
// - A device the user signed in from before (a signed "known device" cookie
//   for that email) is exempt from the two shared limits and has its own 5
//   per 15 minutes, so an attacker elsewhere, or behind the same NAT, cannot
//   lock the owner out.
//
// A successful sign-in gives its slots back: only failures use up a limit.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Limit } from '../store/attempts.js';

const MINUTE = 60_000;

export const SIGN_IN_LIMITS = {
  emailAndIp: { max: 5, windowMs: 15 * MINUTE },
  ip: { max: 20, windowMs: 15 * MINUTE },
  email: { max: 20, windowMs: 60 * MINUTE },
  knownDevice: { max: 5, windowMs: 15 * MINUTE },
} as const;

export const KNOWN_DEVICE_COOKIE = 'deviceid_known';
export const KNOWN_DEVICE_TTL_MS = 365 * 24 * 3600_000;

/** The limits one sign-in attempt counts against. `device` is the nonce of a valid known-device cookie for this email. */
export function signInLimits(email: string, ipKey: string, device: string | null): Limit[] {
  if (device) return [{ key: `signin:device:${device}`, ...SIGN_IN_LIMITS.knownDevice }];
  return [
    { key: `signin:email-ip:${email}|${ipKey}`, ...SIGN_IN_LIMITS.emailAndIp },
    { key: `signin:ip:${ipKey}`, ...SIGN_IN_LIMITS.ip },
    { key: `signin:email:${email}`, ...SIGN_IN_LIMITS.email },
  ];
}

const mac = (secret: string, email: string, nonce: string) => createHmac('sha256', secret).update(`${email}\n${nonce}`).digest('base64url');

/** A cookie value that marks this browser as one `email` signed in from: `<nonce>.<hmac>`. */
export function knownDeviceCookie(secret: string, email: string): string {
  const nonce = randomBytes(16).toString('base64url');
  return `${nonce}.${mac(secret, email, nonce)}`;
}

/** The nonce of a known-device cookie issued for `email`, or null for anything else. */
export function knownDevice(secret: string, email: string, cookie: unknown): string | null {
  if (typeof cookie !== 'string') return null;
  const [nonce, sig, extra] = cookie.split('.');
  if (!nonce || !sig || extra !== undefined) return null;
  const expected = Buffer.from(mac(secret, email, nonce));
  const given = Buffer.from(sig);
  return given.length === expected.length && timingSafeEqual(given, expected) ? nonce : null;
}
