// Decisions: thin adapters to the rules, lists, reviews and claims services.
// The same handlers serve the secret key's routes (/v1, the key's project)
// and the dashboard's (/api/projects/:projectId, the session's account).
import { initServer } from '@ts-rest/express';
import type { z } from 'zod';
import type { LabelRequestSchema, ListEntriesChangeSchema, PreviewRequestSchema, PutRulesetSchema } from '../../contract/decisions.js';
import { contract } from '../../contract/index.js';
import { apiKeyOf, sessionOf } from '../http/context.js';
import type { RouteDeps, Services } from '../services.js';

const s = initServer();

/** The account and project a call acts on, as the services take them. */
type Scope = [accountId: string, projectId: string];

interface Args {
  req: Express.Request;
  params?: { projectId?: string; name?: string; version?: number; requestId?: string };
}

const keyScope = (req: Express.Request): Scope => {
  const key = apiKeyOf(req);
  return [key.accountId, key.projectId];
};
const sessionScope = (req: Express.Request, projectId: string | undefined): Scope => [sessionOf(req).accountId, projectId ?? ''];

function handlers(services: Services, at: (a: Args) => Scope) {
  const name = (a: Args) => a.params?.name ?? '';
  return {
    getRuleset: async (a: Args) => ({ status: 200 as const, body: await services.rules.get(...at(a)) }),
    putRuleset: async (a: Args & { body: z.output<typeof PutRulesetSchema> }) => ({ status: 200 as const, body: await services.rules.put(...at(a), a.body) }),
    getRulesetVersion: async (a: Args) => ({ status: 200 as const, body: await services.rules.version(...at(a), a.params?.version ?? 0) }),
    previewRule: async (a: Args & { body: z.output<typeof PreviewRequestSchema> }) => ({
      status: 200 as const,
      body: await services.rules.preview(...at(a), a.body),
    }),
    getRuleStats: async (a: Args) => ({ status: 200 as const, body: await services.rules.stats(...at(a)) }),
    listLists: async (a: Args) => ({ status: 200 as const, body: { lists: await services.lists.list(...at(a)) } }),
    createList: async (a: Args & { body: { name: string; kind: 'visitorId' | 'linkedId' | 'ip' | 'asn' | 'country'; description: string } }) => ({
      status: 201 as const,
      body: await services.lists.create(...at(a), a.body),
    }),
    getList: async (a: Args) => ({ status: 200 as const, body: await services.lists.get(...at(a), name(a)) }),
    updateList: async (a: Args & { body: { description: string } }) => ({ status: 200 as const, body: await services.lists.update(...at(a), name(a), a.body) }),
    deleteList: async (a: Args) => ({ status: 200 as const, body: await services.lists.remove(...at(a), name(a)) }),
    listEntries: async (a: Args & { query: { prefix?: string | undefined; cursor?: string | undefined; limit: number } }) => ({
      status: 200 as const,
      body: await services.lists.entries(...at(a), name(a), a.query),
    }),
    changeListEntries: async (a: Args & { body: z.output<typeof ListEntriesChangeSchema> }) => ({
      status: 200 as const,
      body: await services.lists.changeEntries(...at(a), name(a), a.body),
    }),
    listReviews: async (a: Args & { query: { status: 'pending' | 'labeled' | 'all'; limit: number; paginationKey?: string | undefined } }) => ({
      status: 200 as const,
      body: await services.reviews.queue(...at(a), a.query),
    }),
    labelEvent: async (a: Args & { body: z.output<typeof LabelRequestSchema> }) => ({
      status: 200 as const,
      body: await services.reviews.label(...at(a), a.params?.requestId ?? '', a.body),
    }),
    exportLabels: async (a: Args & { query: { since?: number | undefined } }) => ({
      status: 200 as const,
      body: await services.reviews.export(...at(a), a.query.since),
    }),
  };
}

export const decisionsRoutes = ({ services }: RouteDeps) =>
  s.router(
    contract.decisions,
    handlers(services, (a) => keyScope(a.req)),
  );

export const dashboardDecisionsRoutes = ({ services }: RouteDeps) =>
  s.router(
    contract.dashboardDecisions,
    handlers(services, (a) => sessionScope(a.req, a.params?.projectId)),
  );

export const enforcementRoutes = ({ services }: RouteDeps) =>
  s.router(contract.enforcement, {
    claimEvent: async ({ req, params, body }) => ({ status: 200, body: await services.claims.claim(apiKeyOf(req), params.requestId, body.maxAgeSeconds) }),
  });
