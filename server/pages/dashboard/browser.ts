// The dashboard page script: loads the account, its usage and projects,
// builds one view per page (views.ts) and shows the one the address names.
// Each view keeps its own state; what they share is the project list and
// choice (types.ts) and the navigation (router.ts). The API is called only
// through the page client; everything from the server is set as text.
import { api } from '../browser/client.js';
import { accountSwitcher } from './accounts.js';
import { auditView } from './audit.js';
import { membersView } from './members.js';
import { el } from '../browser/dom.js';
import { showWho, signOut } from '../browser/session.js';
import { eventsView } from './explorer.js';
import { installPanel } from './install.js';
import { instanceView } from './instance.js';
import { keysView } from './keys.js';
import { lazyPages } from './lazy.js';
import { overviewView } from './overview.js';
import { projectsPanel } from './projects.js';
import { proxyPanel } from './proxy.js';
import { router, type Route } from './router.js';
import { sealingPanel } from './sealing.js';
import { projectsOf, report } from './types.js';
import { reaches, VIEWS, type View } from './views.js';
import { visitorView } from './visitor.js';
import { webhooksPanel } from './webhooks.js';

/** Pages about one project, which show the project choice (the visitor page: for its related visitors). */
const PROJECT_VIEWS: ReadonlySet<View> = new Set(['overview', 'events', 'visitor', 'rules', 'lists', 'reviews', 'install', 'keys', 'webhooks', 'sealing']);

async function start(): Promise<void> {
  const [me, usage, list] = await Promise.all([api.account.getAccount(), api.account.getUsage(), api.account.listProjects()]);
  el('loading').hidden = true;
  if (me.status !== 200) return report('load-error', me);
  if (usage.status !== 200) return report('load-error', usage);
  if (list.status !== 200) return report('load-error', list);
  showWho(me.body.user.email, () => {
    void signOut(
      () => location.assign('/login'),
      (res) => report('load-error', res),
    );
  });
  const account = me.body.account;
  const role = me.body.role;
  el('nav-instance').hidden = !account.admin;
  accountSwitcher(role);
  // Pages the role cannot use leave the navigation (the server refuses their calls anyway).
  for (const a of Array.from(document.querySelectorAll<HTMLAnchorElement>('.dash-nav a[data-view]'))) {
    if (!reaches(role, VIEWS[a.dataset.view as View].role)) a.hidden = true;
  }
  el('proxy-panel').hidden = !reaches(role, 'admin');

  const projects = projectsOf(list.body.projects, el<HTMLSelectElement>('project'));
  const nav = router(
    () => projects.current()?.id,
    (route, moved) => show(route, moved),
  );
  const install = installPanel(projects);
  const proxy = proxyPanel(projects);
  const webhooks = webhooksPanel(projects);
  const sealing = sealingPanel(projects);
  projectsPanel(projects, reaches(role, 'admin'));
  const decisions = lazyPages({ api, projects, nav, role });
  const views: Record<View, { show(route: Route): void }> = {
    overview: overviewView({ account: { ...account, canChangePlan: account.canChangePlan && role === 'owner' }, usage: usage.body }, projects),
    events: eventsView(projects, nav),
    visitor: visitorView(projects, nav, reaches(role, 'admin')),
    ...decisions,
    install: {
      show() {
        install.show();
        if (reaches(role, 'admin')) proxy.show();
      },
    },
    keys: keysView(projects, install),
    webhooks: { show: () => void webhooks.show() },
    sealing: { show: () => void sealing.show() },
    settings: { show: () => undefined },
    members: membersView({ accountId: account.id, userId: me.body.user.id, role }),
    audit: auditView(account.id, nav),
    instance: instanceView(account),
  };

  function show(route: Route, moved: boolean): void {
    const wanted = route.query.get('project');
    if (wanted) projects.choose(wanted);
    for (const view of Object.keys(VIEWS) as View[]) el(`view-${view}`).hidden = view !== route.view;
    for (const a of Array.from(document.querySelectorAll<HTMLAnchorElement>('.dash-nav a'))) {
      const view = a.dataset.view as View;
      a.href = nav.href(view);
      if (view === route.view) a.setAttribute('aria-current', 'page');
      else a.removeAttribute('aria-current');
    }
    const allowed = reaches(role, VIEWS[route.view].role);
    el('project-choice').hidden = !allowed || !PROJECT_VIEWS.has(route.view) || projects.list().length < 2;
    document.title = `${VIEWS[route.view].title} · Dashboard · deviceid`;
    // A page the role cannot use, loaded by its address, says so instead of failing call by call.
    el('view-denied').hidden = allowed;
    if (!allowed) {
      el(`view-${route.view}`).hidden = true;
      el('view-denied').textContent =
        `${VIEWS[route.view].title} needs the ${VIEWS[route.view].role} role or above; yours in this account is ${role}. An owner of the account can change it.`;
      return;
    }
    views[route.view].show(route);
    // After a move within the page, focus goes where a new page's would: its heading.
    if (moved) el(`view-${route.view}`).querySelector<HTMLElement>('h1')?.focus();
  }

  // Another project: the same page for it (in place: Back goes to the previous page, not project).
  projects.onSelect(() => {
    const params = new URLSearchParams(location.search);
    params.set('project', projects.current()?.id ?? '');
    nav.go(`${location.pathname}?${params.toString()}`, true);
  });
  nav.refresh();
}

void start();
