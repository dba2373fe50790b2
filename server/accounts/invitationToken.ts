// Invitations to join an account: the token's shape and what a presented
// token turns out to be. The token is `dij_<ULID>_<secret>`: the ULID names
// the stored invitation (`minv_<ULID>`), only SHA-256 of the secret is
// stored, and the comparison takes the same time whatever differs.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { MemberInvitationDoc } from '../store/memberInvitations.js';
import type { InvitationState } from './signupPolicy.js';

const TOKEN = /^dij_([0-9A-HJKMNP-TV-Z]{26})_([A-Za-z0-9_-]{32})$/;

export const isMemberInvitationToken = (token: string) => token.startsWith('dij_');

export const hashSecret = (secret: string) => createHash('sha256').update(secret).digest('hex');

/** A new token for the invitation `minv_<ulid>`, and the hash to store. */
export function newInvitationToken(ulid: string): { token: string; secretHash: string } {
  const secret = randomBytes(24).toString('base64url');
  return { token: `dij_${ulid}_${secret}`, secretHash: hashSecret(secret) };
}

/** The invitation id a well-formed token names, with its secret; null for anything else. */
export function parseInvitationToken(token: string): { id: string; secret: string } | null {
  const m = TOKEN.exec(token);
  return m ? { id: `minv_${m[1]}`, secret: m[2]! } : null;
}

/** Whether `secret` is the one whose hash was stored, in constant time. */
export function secretMatches(secret: string, storedHash: string): boolean {
  const presented = Buffer.from(hashSecret(secret), 'hex');
  const stored = Buffer.from(storedHash, 'hex');
  return presented.length === stored.length && timingSafeEqual(presented, stored);
}

/**
 * What a presented invitation is, for `email` at `now`: `found` is the stored
 * invitation its id names (null: none), `used` whether it was accepted.
 */
export function memberInvitationState(secret: string, found: MemberInvitationDoc | null, used: boolean, email: string, now: Date): InvitationState {
  if (!found || !secretMatches(secret, found.secretHash)) return 'unknown';
  if (found.revokedAt) return 'revoked';
  if (found.expiresAt <= now) return 'expired';
  if (used) return 'used';
  return found.email === email ? 'valid' : 'other-email';
}
