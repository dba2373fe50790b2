// Webhooks (dashboard API, session): per project, endpoints that receive
// every identification event, signed; their delivery log and redelivery.
import { z } from 'zod';
import { csrfResponses, sessionRoutes } from './account.js';
import { initContract, errorResponse, meta, RequestIdSchema } from './common.js';

const c = initContract();

export const WEBHOOK_LIMITS = {
  endpointsPerProject: 10,
  urlChars: 2048,
  /** Deliveries the log lists per endpoint (newest first). */
  logSize: 50,
} as const;

export const WebhookEndpointSchema = z
  .object({
    id: z
      .string()
      .regex(/^whe_[0-9A-HJKMNP-TV-Z]{26}$/)
      .describe('The endpoint'),
    url: z.string().describe('Where each identification is POSTed, signed'),
    secretHint: z.string().describe('The last 4 characters of the signing secret'),
    createdAt: z.string().datetime().describe('When the endpoint was added'),
    secretRotatedAt: z.string().datetime().describe('When the signing secret was last set (creation or rotation)'),
  })
  .openapi({ title: 'WebhookEndpoint', description: 'Where a project sends each identification' });

export const WebhookDeliverySchema = z
  .object({
    requestId: RequestIdSchema.describe('The event delivered (one delivery per endpoint and event)'),
    status: z.enum(['pending', 'delivered', 'failed']).describe('`failed`: no 2xx within 24 hours of retries (or the endpoint or event is gone)'),
    attempts: z.number().int().nonnegative().describe('Attempts made so far'),
    lastStatus: z.number().int().nullable().describe('HTTP status of the last attempt; null when it got no answer'),
    lastError: z.string().nullable().describe('Why the last attempt failed (status, timeout, refused address); null when it did not'),
    lastAttemptAt: z.string().datetime().nullable().describe('When the last attempt was made; null before the first'),
    nextAttemptAt: z.string().datetime().nullable().describe('When the next attempt is due; null once delivered or failed'),
    deliveredAt: z.string().datetime().nullable().describe('When the endpoint answered 2xx; null until then'),
    createdAt: z.string().datetime().describe('When the delivery was queued (the event was stored)'),
  })
  .openapi({ title: 'WebhookDelivery', description: 'One event sent to one endpoint: attempts and outcome' });

const WebhookSecretSchema = z
  .object({
    endpoint: WebhookEndpointSchema,
    secret: z.string().describe('The signing secret (`whsec_…`). Shown only in this response; store it where you verify signatures.'),
  })
  .openapi({ title: 'WebhookSecret', description: 'An endpoint with its signing secret, shown once' });

const UrlBody = z
  .object({
    url: z
      .string()
      .max(WEBHOOK_LIMITS.urlChars)
      .describe('http(s) URL; loopback, private and link-local addresses are refused unless the operator allows them (WEBHOOKS_ALLOW_PRIVATE)'),
  })
  .strict()
  .openapi({ title: 'CreateWebhookRequest', description: 'A new webhook endpoint' });

const NOT_FOUND = { Project: 'project_not_found', 'Webhook endpoint': 'webhook_endpoint_not_found', Delivery: 'delivery_not_found' } as const;
const notFound = (what: keyof typeof NOT_FOUND) => ({ 404: errorResponse(NOT_FOUND[what], `Unknown ${what.toLowerCase()}, or another account's`) });
const projectPath = '/api/projects/:projectId/webhooks';

export const webhooksContract = c.router(
  {
    listWebhooks: {
      method: 'GET',
      path: projectPath,
      summary: "A project's webhook endpoints (never their secrets)",
      responses: { 200: z.object({ endpoints: z.array(WebhookEndpointSchema).describe("The project's endpoints") }), ...sessionRoutes, ...notFound('Project') },
      metadata: meta({ auth: 'session', role: 'admin' }),
    },
    createWebhook: {
      method: 'POST',
      path: projectPath,
      summary: `Add an endpoint (at most ${WEBHOOK_LIMITS.endpointsPerProject} per project); its signing secret is returned only in this response`,
      description:
        'After each identification of the project, the full event (as `GET /v1/events/:requestId` answers it) is POSTed as JSON to every endpoint, signed: `deviceid-signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>" keyed with the secret>`. Verify with `verifyWebhook(rawBody, header, secret)` of @deviceid/client (it also refuses timestamps more than 5 minutes away). Any 2xx is success; anything else is retried with exponential back-off for 24 hours.',
      body: UrlBody,
      responses: {
        201: WebhookSecretSchema,
        ...sessionRoutes,
        ...csrfResponses,
        ...notFound('Project'),
        409: errorResponse('limit_reached', 'The project has as many endpoints as it may', {
          error: `A project can have at most ${WEBHOOK_LIMITS.endpointsPerProject} webhook endpoints`,
        }),
      },
      metadata: meta({ auth: 'session', csrf: true, role: 'admin' }),
    },
    rotateWebhookSecret: {
      method: 'POST',
      path: `${projectPath}/:endpointId/secret`,
      summary: 'Replace the signing secret; the new one is returned only in this response and signs every delivery from now on',
      body: z.object({}).strict(),
      responses: { 201: WebhookSecretSchema, ...sessionRoutes, ...csrfResponses, ...notFound('Webhook endpoint') },
      metadata: meta({ auth: 'session', csrf: true, role: 'admin' }),
    },
    deleteWebhook: {
      method: 'DELETE',
      path: `${projectPath}/:endpointId`,
      summary: 'Remove an endpoint, with its delivery log; its pending deliveries are given up',
      body: c.noBody(),
      responses: { 200: z.object({ endpoint: WebhookEndpointSchema }), ...sessionRoutes, ...csrfResponses, ...notFound('Webhook endpoint') },
      metadata: meta({ auth: 'session', csrf: true, role: 'admin' }),
    },
    listDeliveries: {
      method: 'GET',
      path: `${projectPath}/:endpointId/deliveries`,
      summary: `The endpoint's delivery log: the newest ${WEBHOOK_LIMITS.logSize} deliveries (kept 30 days)`,
      responses: {
        200: z.object({ deliveries: z.array(WebhookDeliverySchema).describe('The latest deliveries to this endpoint, newest first') }),
        ...sessionRoutes,
        ...notFound('Webhook endpoint'),
      },
      metadata: meta({ auth: 'session', role: 'admin' }),
    },
    redeliver: {
      method: 'POST',
      path: `${projectPath}/:endpointId/deliveries/:requestId/redeliver`,
      summary: 'Deliver an event to the endpoint again (now, then with back-off for another 24 hours until a 2xx)',
      body: z.object({}).strict(),
      responses: { 202: WebhookDeliverySchema, ...sessionRoutes, ...csrfResponses, ...notFound('Delivery') },
      metadata: meta({ auth: 'session', csrf: true, role: 'admin' }),
    },
  },
  { strictStatusCodes: true },
);
