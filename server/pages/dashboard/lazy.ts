// The Rules, Lists and Review pages come in a second script,
// /assets/decisions.js (decisions/browser.ts), loaded the first time one of
// them is shown: with the rule editor's field reference they would push the
// dashboard's own script over its size bound (test/server/pages/
// dashboard.test.ts). That script registers its pages on window; this one
// hands them what the pages share (the API client, the project choice, the
// navigation, the role), so it carries no client of its own.
import type { Role } from '../../../contract/common.js';
import type { api } from '../browser/client.js';
import { problem } from '../browser/dom.js';
import type { Nav, Route } from './router.js';
import type { Projects } from './types.js';
import { VIEWS, viewOf } from './views.js';

export type DecisionView = 'rules' | 'lists' | 'reviews';

export interface Shared {
  api: typeof api;
  projects: Projects;
  nav: Nav;
  role: Role;
}

export type Pages = Record<DecisionView, { show(route: Route): void }>;

declare global {
  interface Window {
    /** Set by /assets/decisions.js: builds its pages. */
    deviceidDecisions?: (shared: Shared) => Pages;
  }
}

export function lazyPages(shared: Shared): Pages {
  let pages: Promise<Pages> | undefined;
  const load = () =>
    (pages ??= new Promise<Pages>((resolve, reject) => {
      const script = document.createElement('script');
      script.src = '/assets/decisions.js';
      script.onload = () => (window.deviceidDecisions ? resolve(window.deviceidDecisions(shared)) : reject(new Error('decisions.js')));
      script.onerror = () => {
        // Tried again the next time one of the pages is shown.
        pages = undefined;
        script.remove();
        reject(new Error('decisions.js'));
      };
      document.head.append(script);
    }));
  const page = (view: DecisionView) => ({
    show(route: Route) {
      const alert = `${view}-load-error`;
      problem(alert, null);
      load().then(
        // Unless another page was chosen meanwhile.
        (built) => viewOf(location.pathname)?.view === view && built[view].show(route),
        () => problem(alert, `${VIEWS[view].title} could not be loaded. Check your connection, then choose it again.`),
      );
    },
  });
  return { rules: page('rules'), lists: page('lists'), reviews: page('reviews') };
}
