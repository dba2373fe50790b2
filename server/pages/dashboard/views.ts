// The dashboard's pages and their addresses: /dashboard is the overview,
// /dashboard/<view> the others, /dashboard/visitors/<id> one visitor. The
// server serves the same page for each; its script shows the one the address
// names (and follows links and Back without reloading). Each page names the
// least role in the current account it is of use to (docs/accounts.md, the
// roles table); the server enforces the roles, this only hides what a role
// cannot use.
import type { Role } from '../../../contract/common.js';

export const VIEWS = {
  overview: { path: '/dashboard', title: 'Overview', role: 'viewer' },
  events: { path: '/dashboard/events', title: 'Events', role: 'viewer' },
  visitor: { path: '/dashboard/visitors', title: 'Visitor', role: 'analyst' },
  rules: { path: '/dashboard/rules', title: 'Rules', role: 'viewer' },
  lists: { path: '/dashboard/lists', title: 'Lists', role: 'viewer' },
  reviews: { path: '/dashboard/review', title: 'Review', role: 'viewer' },
  install: { path: '/dashboard/install', title: 'Install', role: 'analyst' },
  keys: { path: '/dashboard/keys', title: 'API keys', role: 'admin' },
  webhooks: { path: '/dashboard/webhooks', title: 'Webhooks', role: 'admin' },
  sealing: { path: '/dashboard/sealing', title: 'Sealed results', role: 'admin' },
  settings: { path: '/dashboard/settings', title: 'Settings', role: 'analyst' },
  members: { path: '/dashboard/members', title: 'Members', role: 'admin' },
  audit: { path: '/dashboard/audit', title: 'Audit log', role: 'admin' },
  instance: { path: '/dashboard/instance', title: 'Instance', role: 'admin' },
} as const satisfies Record<string, { path: string; title: string; role: Role }>;

export type View = keyof typeof VIEWS;

const RANK: Record<Role, number> = { viewer: 0, analyst: 1, admin: 2, owner: 3 };

/** Whether `role` reaches `needed` (the order of server/accounts/access.ts). */
export const reaches = (role: Role, needed: Role): boolean => RANK[role] >= RANK[needed];

/** Pages that are about no one project (no project in their address). */
export const ACCOUNT_VIEWS: ReadonlySet<View> = new Set(['settings', 'members', 'audit', 'instance']);

const VISITOR_PATH = /^\/dashboard\/visitors(?:\/(iq_[0-9A-HJKMNP-TV-Z]{26}))?\/?$/;

/** The view an address names (with the visitor id of /dashboard/visitors/<id>), or null for none. */
export function viewOf(pathname: string): { view: View; visitorId?: string } | null {
  const visitor = VISITOR_PATH.exec(pathname);
  if (visitor) return visitor[1] ? { view: 'visitor', visitorId: visitor[1] } : { view: 'visitor' };
  const path = pathname.replace(/\/$/, '') || '/';
  for (const [view, v] of Object.entries(VIEWS)) if (v.path === path) return { view: view as View };
  return null;
}
