// What a role may do: the one table the auth middleware applies to every
// session route (its `role` metadata) and the device flow applies again when
// it issues an approved key. Roles are ordered; each may do what those after
// it may (contract/common.ts ROLES).
import { ROLES, type Role, type RoleRequirement } from '../../contract/common.js';

const rank = (role: Role): number => ROLES.length - ROLES.indexOf(role);

/** Whether a member with `role` may use a route that requires `required`. */
export function roleAllows(role: Role, required: RoleRequirement): boolean {
  return required === 'signedIn' || rank(role) >= rank(required);
}

/** Creating API keys (dashboard or device flow) is for admins and owners. */
export const KEY_CREATOR: Role = 'admin';

/** Whether a member with `granter`'s role may give someone `role` (invite them with it): never above their own. */
export const mayGrant = (granter: Role, role: Role): boolean => rank(granter) >= rank(role);
