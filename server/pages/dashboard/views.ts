// The dashboard's pages and their addresses: /dashboard is the overview,
// /dashboard/<view> the others, /dashboard/visitors/<id> one visitor. The
// server serves the same page for each; its script shows the one the address
// names (and follows links and Back without reloading).
export const VIEWS = {
  overview: { path: '/dashboard', title: 'Overview' },
  events: { path: '/dashboard/events', title: 'Events' },
  visitor: { path: '/dashboard/visitors', title: 'Visitor' },
  install: { path: '/dashboard/install', title: 'Install' },
  keys: { path: '/dashboard/keys', title: 'API keys' },
  webhooks: { path: '/dashboard/webhooks', title: 'Webhooks' },
  sealing: { path: '/dashboard/sealing', title: 'Sealed results' },
  settings: { path: '/dashboard/settings', title: 'Settings' },
  instance: { path: '/dashboard/instance', title: 'Instance' },
} as const;

export type View = keyof typeof VIEWS;

const VISITOR_PATH = /^\/dashboard\/visitors(?:\/(iq_[0-9A-HJKMNP-TV-Z]{26}))?\/?$/;

/** The view an address names (with the visitor id of /dashboard/visitors/<id>), or null for none. */
export function viewOf(pathname: string): { view: View; visitorId?: string } | null {
  const visitor = VISITOR_PATH.exec(pathname);
  if (visitor) return visitor[1] ? { view: 'visitor', visitorId: visitor[1] } : { view: 'visitor' };
  const path = pathname.replace(/\/$/, '') || '/';
  for (const [view, v] of Object.entries(VIEWS)) if (v.path === path) return { view: view as View };
  return null;
}
