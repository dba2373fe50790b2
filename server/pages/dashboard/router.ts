// Moving between the dashboard's pages without reloading: links to a page
// (views.ts) and the browser's Back and Forward go through the History API;
// the address always names the page, its project and its filters, so a
// reload or a shared link shows the same thing.
import { ACCOUNT_VIEWS, VIEWS, viewOf, type View } from './views.js';

export interface Route {
  view: View;
  visitorId?: string;
  query: URLSearchParams;
  /**
   * Back or Forward only: the page and query the browser moved from, so that
   * a page can tell a step within itself (an event opened, then closed) from
   * arriving. Absent at start and after a link, a form or a project change.
   */
  from?: { view: View; query: URLSearchParams };
}

export interface Nav {
  /** Goes to a dashboard address (a new history entry; `replace`: in place). */
  go(href: string, replace?: boolean): void;
  /** The address of a page, with the chosen project and `query`. */
  href(view: View, query?: Record<string, string>, visitorId?: string): string;
  /** Shows the page of the current address again (at start, or when the project changes). */
  refresh(): void;
  /**
   * Sets (null: removes) parameters of the current address in a new history
   * entry, for what the page already shows (an open event): the page is not
   * shown again, and Back returns to the address before.
   */
  amend(params: Record<string, string | null>): void;
}

export function router(projectId: () => string | undefined, show: (route: Route, moved: boolean) => void): Nav {
  /** The page and query of the address shown now. */
  let here: NonNullable<Route['from']> | undefined;
  const route = (moved: boolean, traversed = false) => {
    const found = viewOf(location.pathname) ?? { view: 'overview' as const };
    const query = new URLSearchParams(location.search);
    const from = traversed ? here : undefined;
    here = { view: found.view, query };
    show({ ...found, query, ...(from ? { from } : {}) }, moved);
  };
  const nav: Nav = {
    go(href, replace = false) {
      if (replace) history.replaceState(null, '', href);
      else history.pushState(null, '', href);
      route(true);
    },
    href(view, query = {}, visitorId) {
      const project = projectId();
      const params = new URLSearchParams({ ...(project && !ACCOUNT_VIEWS.has(view) ? { project } : {}), ...query });
      const path = visitorId ? `${VIEWS.visitor.path}/${visitorId}` : VIEWS[view].path;
      const search = params.toString();
      return search ? `${path}?${search}` : path;
    },
    refresh: () => route(false),
    amend(params) {
      const query = new URLSearchParams(location.search);
      for (const [name, value] of Object.entries(params)) {
        if (value === null) query.delete(name);
        else query.set(name, value);
      }
      const search = query.toString() ? `?${query.toString()}` : '';
      if (search === location.search) return;
      history.pushState(null, '', location.pathname + search);
      if (here) here = { ...here, query };
    },
  };
  // Links to dashboard pages stay in the page (a modified click still opens a tab).
  document.addEventListener('click', (event) => {
    const a = (event.target as Element | null)?.closest?.('a');
    if (!a || event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    if (a.origin !== location.origin || a.target || !viewOf(a.pathname)) return;
    event.preventDefault();
    nav.go(a.pathname + a.search);
  });
  window.addEventListener('popstate', () => route(true, true));
  return nav;
}
