// Webhooks (dashboard API): thin adapters to WebhooksService.
import { initServer } from '@ts-rest/express';
import { contract } from '../../contract/index.js';
import { sessionOf } from '../http/context.js';
import type { RouteDeps } from '../services.js';

const s = initServer();

export const webhooksRoutes = ({ services }: RouteDeps) =>
  s.router(contract.webhooks, {
    listWebhooks: async ({ req, params }) => ({ status: 200, body: { endpoints: await services.webhooks.list(sessionOf(req).accountId, params.projectId) } }),
    createWebhook: async ({ req, params, body }) => ({
      status: 201,
      body: await services.webhooks.create(sessionOf(req).accountId, params.projectId, body.url),
    }),
    rotateWebhookSecret: async ({ req, params }) => ({
      status: 201,
      body: await services.webhooks.rotate(sessionOf(req).accountId, params.projectId, params.endpointId),
    }),
    deleteWebhook: async ({ req, params }) => ({
      status: 200,
      body: await services.webhooks.remove(sessionOf(req).accountId, params.projectId, params.endpointId),
    }),
    listDeliveries: async ({ req, params }) => ({
      status: 200,
      body: { deliveries: await services.webhooks.deliveries(sessionOf(req).accountId, params.projectId, params.endpointId) },
    }),
    redeliver: async ({ req, params }) => ({
      status: 202,
      body: await services.webhooks.redeliver(sessionOf(req).accountId, params.projectId, params.endpointId, params.requestId),
    }),
  });
