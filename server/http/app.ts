// Builds the Express app (no listening): the request pipeline, in order,
// request id → logging → JSON body (size limit) → auth from route metadata →
// ts-rest validation → handler; then 404 and the one error handler.
import { createExpressEndpoints, initServer } from '@ts-rest/express';
import express, { type Express } from 'express';
import { pinoHttp } from 'pino-http';
import type { Logger } from 'pino';
import { ulid } from 'ulid';
import { contract } from '../../contract/index.js';
import { LIMITS } from '../../contract/identify.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import { deviceFlowRoutes } from '../routes/deviceflow.js';
import { eventsRoutes } from '../routes/events.js';
import { healthRoutes } from '../routes/health.js';
import { identifyRoutes } from '../routes/identify.js';
import { openApiDocument } from '../routes/openapi.js';
import { visitsRoutes } from '../routes/visits.js';
import type { Store } from '../store/index.js';
import { authMiddleware } from './auth.js';
import { errorHandler, notFoundHandler, requestValidationErrorHandler } from './errors.js';

export interface AppDeps {
  config: Config;
  store: Store;
  clock: Clock;
  logger: Logger;
}

export function createApp(deps: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);

  app.use(
    pinoHttp({
      logger: deps.logger,
      genReqId: (req, res) => {
        const id = `rid_${ulid()}`;
        res.setHeader('X-Request-Id', id);
        return id;
      },
      // Only method and path: never headers (keys, cookies), query strings or bodies (device codes).
      serializers: {
        req: (req: { id: string; method: string; url: string }) => ({ id: req.id, method: req.method, path: req.url.split('?')[0] }),
        res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
      },
      customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : 'info'),
    }),
  );

  app.use(express.json({ limit: LIMITS.bodyBytes, strict: true }));

  app.get('/openapi.json', (_req, res) => {
    res.json(openApiDocument);
  });

  const s = initServer();
  const router = s.router(contract, {
    health: healthRoutes(deps),
    identify: identifyRoutes(deps),
    events: eventsRoutes(deps),
    visits: visitsRoutes(deps),
    deviceFlow: deviceFlowRoutes(deps),
  });

  createExpressEndpoints(contract, router, app, {
    globalMiddleware: [authMiddleware(deps.store)],
    requestValidationErrorHandler,
    responseValidation: true,
    logInitialization: false,
  });

  app.use(notFoundHandler);
  app.use(errorHandler);
  return app;
}
