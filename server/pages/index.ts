// The service's own HTML pages and their assets, each behind the page
// security headers: / (home), /docs (API reference), /docs/<page> (the
// manual), /demo (playground), /login (sign-in / sign-up), /dashboard and its
// pages, /cli/auth (device code consent), and /favicon.ico. Registered on the app before the API routes.
import { Router } from 'express';
import { consentPage } from './consent/page.js';
import type { RouteDeps } from '../services.js';
import { isScriptName, pageScript, stylesheet } from './assets.js';
import { dashboardPage } from './dashboard/page.js';
import { viewOf } from './dashboard/views.js';
import { demoPage } from './demo/page.js';
import { manualPage } from './docs/manual.js';
import { docsPage, docsSecurity, REDOC_PATH, redocScript } from './docs/page.js';
import { FAVICON } from './favicon.js';
import { homePage } from './home/page.js';
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
  router.get(REDOC_PATH, secure, (_req, res, next) => {
    redocScript()
      .then((js) => res.type('text/javascript').set('Cache-Control', 'public, max-age=3600').send(js))
      .catch(next);
  });
  router.get('/favicon.ico', (_req, res) => {
    res.type('image/x-icon').set('Cache-Control', 'public, max-age=86400').send(FAVICON);
  });
  router.get('/', secure, homePage());
  router.get('/docs', docsSecurity(config.baseUrl), docsPage());
  router.get('/docs/:page', secure, manualPage());
  router.get('/demo', secure, demoPage(services.accounts));
  router.get('/login', secure, loginPage(services.accounts, config.baseUrl));
  // Every dashboard page's address is the same page (deep links, reloads); others are 404.
  const dashboard = dashboardPage(services.accounts);
  router.get(/^\/dashboard(?:\/.*)?$/, secure, (req, res, next) => (viewOf(req.path) ? dashboard(req, res, next) : next()));
  router.get('/cli/auth', secure, consentPage(services.accounts));
  return router;
}
