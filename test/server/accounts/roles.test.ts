// The role table and the invitation token, as pure functions (the HTTP
// behaviour is in teams.test.ts).
import { describe, expect, it } from 'vitest';
import { ROLES, type Role } from '../../../contract/common.js';
import { KEY_CREATOR, mayGrant, roleAllows } from '../../../server/accounts/access.js';
import {
  hashSecret,
  isMemberInvitationToken,
  memberInvitationState,
  newInvitationToken,
  parseInvitationToken,
  secretMatches,
} from '../../../server/accounts/invitationToken.js';
import type { MemberInvitationDoc } from '../../../server/store/memberInvitations.js';

describe('roleAllows', () => {
  it('orders owner > admin > analyst > viewer; signedIn is any member', () => {
    const table = ROLES.map((role) => ROLES.map((required) => (roleAllows(role, required) ? 'y' : '-')).join(''));
    // Rows: owner, admin, analyst, viewer; columns: required owner, admin, analyst, viewer.
    expect(table).toEqual(['yyyy', '-yyy', '--yy', '---y']);
    for (const role of ROLES) expect(roleAllows(role, 'signedIn')).toBe(true);
  });

  it('lets admins and owners create keys, and nobody grant a role above their own', () => {
    expect(ROLES.filter((r) => roleAllows(r, KEY_CREATOR))).toEqual(['owner', 'admin']);
    const grants = (granter: Role) => ROLES.filter((r) => mayGrant(granter, r));
    expect(grants('owner')).toEqual(['owner', 'admin', 'analyst', 'viewer']);
    expect(grants('admin')).toEqual(['admin', 'analyst', 'viewer']);
    expect(grants('analyst')).toEqual(['analyst', 'viewer']);
    expect(grants('viewer')).toEqual(['viewer']);
  });
});

describe('invitation tokens', () => {
  const ULID = '01JD0S3V6ZQ8Y0K2W3ZP4X5Y6Z';
  const now = new Date('2026-01-15T12:00:00Z');
  const { token, secretHash } = newInvitationToken(ULID);
  const secret = token.slice(`dij_${ULID}_`.length);
  const doc = (over: Partial<MemberInvitationDoc> = {}): MemberInvitationDoc => ({
    _id: `minv_${ULID}`,
    accountId: 'acc_x',
    email: 'a@example.com',
    role: 'viewer',
    secretHash,
    createdBy: 'usr_x',
    createdAt: now,
    expiresAt: new Date(now.getTime() + 1000),
    revokedAt: null,
    ...over,
  });

  it('is dij_<ulid>_<32 base64url characters>, naming minv_<ulid>; the hash is of the secret only', () => {
    expect(token).toMatch(/^dij_[0-9A-HJKMNP-TV-Z]{26}_[A-Za-z0-9_-]{32}$/);
    expect(parseInvitationToken(token)).toEqual({ id: `minv_${ULID}`, secret });
    expect(secretHash).toBe(hashSecret(secret));
    expect(secretHash).toMatch(/^[0-9a-f]{64}$/);
    expect(newInvitationToken(ULID).token).not.toBe(token);
    expect(isMemberInvitationToken(token)).toBe(true);
    expect(isMemberInvitationToken('abc' + token)).toBe(false);
    expect(isMemberInvitationToken(secret)).toBe(false);
  });

  it('refuses anything else', () => {
    for (const bad of [
      '',
      `dij_${ULID}_${secret}x`,
      `x${token}`,
      `${token}\n`,
      `dij_${ULID}_${secret.slice(1)}`,
      `dij_${ULID.toLowerCase()}_${secret}`,
      `dij_${ULID.slice(1)}_${secret}`,
      `dij_${ULID}I_${secret.slice(1)}`,
      `dij_${ULID}_${secret.slice(0, 31)}!`,
      `inv_${ULID}_${secret}`,
      `dij${ULID}_${secret}`,
    ]) {
      expect(parseInvitationToken(bad), bad).toBeNull();
    }
  });

  it('compares the secret in constant time against the stored hash', () => {
    expect(secretMatches(secret, secretHash)).toBe(true);
    expect(secretMatches(secret.slice(0, -1) + (secret.endsWith('a') ? 'b' : 'a'), secretHash)).toBe(false);
    expect(secretMatches(secret, secretHash.slice(0, 62))).toBe(false);
    expect(secretMatches(secret, '')).toBe(false);
  });

  it('tells what a presented invitation is', () => {
    const email = 'a@example.com';
    expect(memberInvitationState(secret, doc(), false, email, now)).toBe('valid');
    expect(memberInvitationState(secret, null, false, email, now)).toBe('unknown');
    expect(memberInvitationState('x'.repeat(32), doc(), false, email, now)).toBe('unknown');
    expect(memberInvitationState(secret, doc({ revokedAt: now }), true, email, now)).toBe('revoked');
    expect(memberInvitationState(secret, doc({ expiresAt: now }), true, email, now)).toBe('expired');
    expect(memberInvitationState(secret, doc({ expiresAt: new Date(now.getTime() + 1) }), false, email, now)).toBe('valid');
    expect(memberInvitationState(secret, doc(), true, email, now)).toBe('used');
    expect(memberInvitationState(secret, doc(), false, 'b@example.com', now)).toBe('other-email');
    // Checks come in this order: a wrong secret says nothing of the invitation's state.
    expect(memberInvitationState('x'.repeat(32), doc({ revokedAt: now }), true, 'b@example.com', now)).toBe('unknown');
    expect(memberInvitationState(secret, doc({ revokedAt: now, expiresAt: now }), true, 'b@example.com', now)).toBe('revoked');
    expect(memberInvitationState(secret, doc({ expiresAt: now }), true, 'b@example.com', now)).toBe('expired');
    expect(memberInvitationState(secret, doc(), true, 'b@example.com', now)).toBe('used');
  });
});
