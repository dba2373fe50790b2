// The service's own HTML pages and their assets, each behind the page
// security headers: /login (sign-in / sign-up), /dashboard and /cli/auth
// (device code consent). Registered on the app before the API routes.
import { Router } from 'express';
import { consentPage } from '../deviceflow/page/page.js';
import type { RouteDeps } from '../routes/deps.js';
import { isScriptName, pageScript, stylesheet } from './assets.js';
import { dashboardPage } from './dashboard/page.js';
import { loginPage } from './login/page.js';
import { pageSecurity } from './security.js';

export function pageRoutes({ services, config }: RouteDeps): Router {
  const router = Router();
  const secure = pageSecurity(config.baseUrl);

  router.get('/assets/pages.css', secure, (_req, res, next) => {
    stylesheet()
      .then((css) => res.type('text/css').set('Cache-Control', 'public, max-age=300').send(css))
      .catch(next);
  });
  router.get('/assets/:name', secure, (req, res, next) => {
    const name = req.params.name ?? '';
    if (!isScriptName(name)) {
      next();
      return;
    }
    pageScript(name)
      .then((js) => res.type('text/javascript').set('Cache-Control', 'public, max-age=300').send(js))
      .catch(next);
  });
  router.get('/login', secure, loginPage(services.accounts, config.baseUrl));
  router.get('/dashboard', secure, dashboardPage(services.accounts));
  router.get('/cli/auth', secure, consentPage(services.accounts));
  return router;
}
