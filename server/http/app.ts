// Builds the Express app (no listening): the request pipeline, in order,
// pipelining cap → request id → logging → response headers → database gate
// (503 while it is away) → JSON body (size limit; only on routes that take
// one) → auth from route metadata → ts-rest validation → handler; then 404
// and the one error handler.
import { isAppRoute, type AppRoute, type AppRouter } from '@ts-rest/core';
import { createExpressEndpoints, initServer } from '@ts-rest/express';
import cookieParser from 'cookie-parser';
import cors from 'cors';
import express, { Router, type Express, type RequestHandler } from 'express';
import { pinoHttp } from 'pino-http';
import { ulid } from '../ids.js';
import { contract } from '../../contract/index.js';
import { LIMITS } from '../../contract/identify.js';
import { pageRoutes } from '../pages/index.js';
import { accountRoutes } from '../routes/account.js';
import { adminRoutes } from '../routes/admin.js';
import { demoRoutes } from '../routes/demo.js';
import { deviceFlowRoutes } from '../routes/deviceflow.js';
import { eventsRoutes } from '../routes/events.js';
import { explorerRoutes } from '../routes/explorer.js';
import { healthRoutes } from '../routes/health.js';
import { identifyRoutes } from '../routes/identify.js';
import { keysRoutes } from '../routes/keys.js';
import { membersRoutes } from '../routes/members.js';
import { dashboardDecisionsRoutes, decisionsRoutes, enforcementRoutes } from '../routes/decisions.js';
import { openApiDocument } from '../routes/openapi.js';
import { proxyRoutes } from '../routes/proxy.js';
import { linkedIdRoutes } from '../routes/linkedIds.js';
import { sealingRoutes } from '../routes/sealing.js';
import { visitorsRoutes } from '../routes/visitors.js';
import { webhooksRoutes } from '../routes/webhooks.js';
import { visitsRoutes } from '../routes/visits.js';
import { createServices, type AppDeps, type RouteDeps } from '../services.js';
import type { Store } from '../store/index.js';
import { agentScript } from './agentScript.js';
import { authMiddleware } from './auth.js';
import { BodyBudget } from './bodyBudget.js';
import { httpMetrics, markRefusal } from '../metrics/http.js';
import { databaseUnavailable, errorHandler, notFoundHandler, requestValidationErrorHandler } from './errors.js';
import { pipeliningCap } from './pipelining.js';

/**
 * What a log line says of the path: the matched route's template
 * (`/v1/demo/visits/:visitorId`), so that no visitor id, request id or user
 * code (which lets a signed-in user approve a grant) lands in the logs, and
 * deleting a visitor's data leaves nothing of it there. A path no route
 * matched keeps its text, without the query and with anything shaped like an
 * id or a user code replaced.
 */
function loggedPath(req: { originalUrl?: string; url?: string; route?: { path?: unknown }; baseUrl?: string }): string {
  if (typeof req.route?.path === 'string') return `${req.baseUrl ?? ''}${req.route.path}`;
  return ((req.originalUrl ?? req.url ?? '').split('?')[0] ?? '')
    .split('/')
    .map((segment) => (/^[a-z]{2,8}_[0-9A-Za-z]{20,}$|^[A-Z]{4}-[A-Z]{4}$/.test(segment) ? ':id' : segment))
    .join('/');
}

/** Paths that never touch the database: they answer while it is away. */
const WITHOUT_DATABASE = /^\/(healthz|readyz|openapi\.json|openapi\/dashboard\.json|agent\.js|assets\/|favicon\.ico$|docs$|$)/;

/** While the database is known to be unreachable, requests that need it get 503 at once. */
function databaseGate(store: Store): RequestHandler {
  return (req, res, next) => {
    if (store.available() || WITHOUT_DATABASE.test(req.path)) return next();
    markRefusal(res, 'database_unavailable');
    next(databaseUnavailable());
  };
}

/**
 * No response is sniffed as another type, and nothing the API answers is
 * cached: its answers are per account and some carry secrets (new keys,
 * sessions, device-flow tokens, invitations).
 */
const responseHeaders: RequestHandler = (req, res, next) => {
  res.setHeader('X-Content-Type-Options', 'nosniff');
  if (req.path.startsWith('/api/') || req.path.startsWith('/v1/')) res.setHeader('Cache-Control', 'no-store');
  next();
};

function routesOf(router: AppRouter): AppRoute[] {
  return Object.values(router).flatMap((entry) => (isAppRoute(entry) ? [entry] : routesOf(entry)));
}

/**
 * `parse` runs only on the contract's routes that take a body (the pages take
 * none), matched as ts-rest matches them: a body sent anywhere else is never
 * read into memory nor counted in the body budget, and gets its 404 unread.
 */
function bodiesOfRoutes(parse: RequestHandler): RequestHandler {
  const router = Router();
  for (const route of routesOf(contract)) {
    if (route.method !== 'GET') router[route.method.toLowerCase() as 'post' | 'put' | 'patch' | 'delete'](route.path, parse);
  }
  // A router answers OPTIONS for its paths itself: CORS preflights (bodiless) go on to cors().
  return (req, res, next) => (req.method === 'OPTIONS' ? next() : router(req, res, next));
}

/** The app, and what must run before the process exits (usage written, unused quota given back). */
export type App = Express & { drain(): Promise<void> };

export function createApp(deps: AppDeps): App {
  const services = createServices(deps);
  const rd: RouteDeps = { ...deps, services };
  const app = express();
  // Background work (deletion jobs, webhook delivery) is started by main.ts, and driven by tests, through these.
  app.locals.services = services;
  app.disable('x-powered-by');
  app.set('etag', false);

  app.use(pipeliningCap());
  if (deps.metrics) app.use(httpMetrics(deps.metrics));
  app.use(
    pinoHttp({
      logger: deps.logger,
      genReqId: (_req, res) => {
        const id = `rid_${ulid()}`;
        res.setHeader('X-Request-Id', id);
        return id;
      },
      // Only method and path: never headers (keys, cookies), query strings or
      // bodies (device codes). The path is written when the request completes,
      // once routing has named its template.
      serializers: {
        req: (req: { id: string; method: string }) => ({ id: req.id, method: req.method }),
        res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
      },
      // One line per request. Only true 500s carry an error (and its stack);
      // 503s while the database is away are expected and logged short.
      customLogLevel: (_req, res, err) => (err || res.err ? 'error' : res.statusCode >= 500 ? 'warn' : 'info'),
      customSuccessObject: (req, _res, val: Record<string, unknown>) => ({ ...val, path: loggedPath(req) }),
      customErrorObject: (req, res, _err, val: Record<string, unknown>) => ({ ...(res.err ? val : { ...val, err: undefined }), path: loggedPath(req) }),
    }),
  );

  app.use(responseHeaders);
  app.use(databaseGate(deps.store));
  app.use(bodiesOfRoutes(express.json({ limit: LIMITS.bodyBytes, strict: true, verify: new BodyBudget(deps.config.bodyBudgetBytes).verify })));
  app.use(cookieParser());
  // HTML pages (sign-in, dashboard, CLI consent) with their security headers.
  app.use(pageRoutes(rd));

  app.get('/openapi.json', (_req, res) => {
    res.type('application/json').send(openApiDocument('public', deps.config.baseUrl));
  });
  app.get('/openapi/dashboard.json', (_req, res) => {
    res.type('application/json').send(openApiDocument('dashboard', deps.config.baseUrl));
  });
  app.get('/agent.js', (req, res, next) => {
    agentScript()
      .then(({ js, etag }) => {
        res.set({ 'Cache-Control': 'public, max-age=300', ETag: etag });
        const presented = req.headers['if-none-match'];
        if (presented !== undefined && presented.split(',').some((t) => t.trim().replace(/^W\//, '') === etag)) res.status(304).end();
        else res.type('text/javascript').send(js);
      })
      .catch(next);
  });
  // Customers' pages call identify cross-origin with a JSON body and X-API-Key,
  // which needs a preflight. Any origin may ask: the project's domain
  // allowlist decides, and no cookies are involved.
  app.use('/v1/identify', cors({ origin: true, methods: ['POST'], allowedHeaders: ['content-type', 'x-api-key'], maxAge: 600 }));

  const s = initServer();
  const router = s.router(contract, {
    health: healthRoutes(rd),
    identify: identifyRoutes(rd),
    events: eventsRoutes(rd),
    visits: visitsRoutes(rd),
    visitors: visitorsRoutes(rd),
    keys: keysRoutes(rd),
    deviceFlow: deviceFlowRoutes(rd),
    account: accountRoutes(rd),
    demo: demoRoutes(rd),
    admin: adminRoutes(rd),
    sealing: sealingRoutes(rd),
    linkedIds: linkedIdRoutes(rd),
    webhooks: webhooksRoutes(rd),
    explorer: explorerRoutes(rd),
    proxy: proxyRoutes(rd),
    members: membersRoutes(rd),
    decisions: decisionsRoutes(rd),
    dashboardDecisions: dashboardDecisionsRoutes(rd),
    enforcement: enforcementRoutes(rd),
  });

  createExpressEndpoints(contract, router, app, {
    // ts-rest types these per route (a union no plain Express handler matches);
    // ours read only headers, cookies and route metadata.
    globalMiddleware: [
      authMiddleware({
        store: deps.store,
        clock: deps.clock,
        accounts: services.accounts,
        proxy: services.proxy,
        ownOrigin: new URL(deps.config.baseUrl).origin,
        clientIp: (req) => services.clientIp(req),
      }) as never,
    ],
    requestValidationErrorHandler: requestValidationErrorHandler as never,
    responseValidation: true,
    logInitialization: false,
  });

  app.use(notFoundHandler);
  app.use(errorHandler);
  return Object.assign(app, { drain: async () => void (await Promise.all([services.meter.close(), services.proxy.close(), services.passwords.stop()])) });
}
