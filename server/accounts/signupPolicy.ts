// Who may create an account (SIGNUP): anyone (`open`), holders of an
// administrator's invitation (`invite`, the default), or nobody (`closed`).
// The first account of an instance may always sign up, and becomes its
// administrator: otherwise nobody could ever invite anyone.
//
// The decision is made before the email is looked at, so a refusal says
// nothing about which addresses have accounts.
import type { ErrorCode } from '../../contract/errors.js';
import type { SignupMode } from '../config.js';

/** What an invitation presented at sign-up turned out to be. */
export type InvitationState = 'none' | 'unknown' | 'revoked' | 'expired' | 'used' | 'other-email' | 'valid';

export const INVITATION_PROBLEMS: Record<Exclude<InvitationState, 'valid'>, string> = {
  none: 'Sign-up needs an invitation from the administrator',
  unknown: 'This invitation is not valid',
  revoked: 'This invitation has been withdrawn',
  expired: 'This invitation has expired',
  used: 'This invitation has already been used',
  'other-email': 'This invitation is for another email address',
};

export interface Refusal {
  code: Extract<ErrorCode, 'signup_not_allowed' | 'invitation_used'>;
  text: string;
}

/** Why the sign-up is refused (403), or null when it may go ahead. */
export function signupRefusal(mode: SignupMode, firstAccount: boolean, invitation: InvitationState): Refusal | null {
  if (firstAccount || mode === 'open') return null;
  if (mode === 'closed') return { code: 'signup_not_allowed', text: 'Sign-up is closed on this instance' };
  if (invitation === 'valid') return null;
  return { code: invitation === 'used' ? 'invitation_used' : 'signup_not_allowed', text: INVITATION_PROBLEMS[invitation] };
}

interface InvitationFacts {
  email: string | null;
  expiresAt: Date;
  revokedAt: Date | null;
}

/** The state of a presented invitation: `found` is the stored one (null: no such token), `used` whether it was used. */
export function invitationState(presented: boolean, found: InvitationFacts | null, used: boolean, email: string, now: Date): InvitationState {
  if (!presented) return 'none';
  if (!found) return 'unknown';
  if (found.revokedAt) return 'revoked';
  if (found.expiresAt <= now) return 'expired';
  if (used) return 'used';
  return found.email !== null && found.email !== email ? 'other-email' : 'valid';
}
