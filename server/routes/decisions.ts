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

interface Scope {
  accountId: string;
  projectId: string;
}

interface Args {
  req: Express.Request;
  params?: { projectId?: string; name?: string; version?: number; requestId?: string };
}

const keyScope = (req: Express.Request): Scope => {
  const key = apiKeyOf(req);
  return { accountId: key.accountId, projectId: key.projectId };
};
const sessionScope = (req: Express.Request, projectId: string | undefined): Scope => ({ accountId: sessionOf(req).accountId, projectId: projectId ?? '' });

function handlers(services: Services, scope: (a: Args) => Scope) {
  const name = (a: Args) => a.params?.name ?? '';
  return {
    getRuleset: async (a: Args) => {
      const { accountId, projectId } = scope(a);
      return { status: 200 as const, body: await services.rules.get(accountId, projectId) };
    },
    putRuleset: async (a: Args & { body: z.output<typeof PutRulesetSchema> }) => {
      const { accountId, projectId } = scope(a);
      return { status: 200 as const, body: await services.rules.put(accountId, projectId, a.body) };
    },
    getRulesetVersion: async (a: Args) => {
      const { accountId, projectId } = scope(a);
      return { status: 200 as const, body: await services.rules.version(accountId, projectId, a.params?.version ?? 0) };
    },
    previewRule: async (a: Args & { body: z.output<typeof PreviewRequestSchema> }) => {
      const { accountId, projectId } = scope(a);
      return { status: 200 as const, body: await services.rules.preview(accountId, projectId, a.body) };
    },
    getRuleStats: async (a: Args) => {
      const { accountId, projectId } = scope(a);
      return { status: 200 as const, body: await services.rules.stats(accountId, projectId) };
    },
    listLists: async (a: Args) => {
      const { accountId, projectId } = scope(a);
      return { status: 200 as const, body: { lists: await services.lists.list(accountId, projectId) } };
    },
    createList: async (a: Args & { body: { name: string; kind: 'visitorId' | 'linkedId' | 'ip' | 'asn' | 'country'; description: string } }) => {
      const { accountId, projectId } = scope(a);
      return { status: 201 as const, body: await services.lists.create(accountId, projectId, a.body) };
    },
    getList: async (a: Args) => {
      const { accountId, projectId } = scope(a);
      return { status: 200 as const, body: await services.lists.get(accountId, projectId, name(a)) };
    },
    updateList: async (a: Args & { body: { description: string } }) => {
      const { accountId, projectId } = scope(a);
      return { status: 200 as const, body: await services.lists.update(accountId, projectId, name(a), a.body) };
    },
    deleteList: async (a: Args) => {
      const { accountId, projectId } = scope(a);
      return { status: 200 as const, body: await services.lists.remove(accountId, projectId, name(a)) };
    },
    listEntries: async (a: Args & { query: { prefix?: string | undefined; cursor?: string | undefined; limit: number } }) => {
      const { accountId, projectId } = scope(a);
      return { status: 200 as const, body: await services.lists.entries(accountId, projectId, name(a), a.query) };
    },
    changeListEntries: async (a: Args & { body: z.output<typeof ListEntriesChangeSchema> }) => {
      const { accountId, projectId } = scope(a);
      return { status: 200 as const, body: await services.lists.changeEntries(accountId, projectId, name(a), a.body) };
    },
    listReviews: async (a: Args & { query: { status: 'pending' | 'labeled' | 'all'; limit: number; paginationKey?: string | undefined } }) => {
      const { accountId, projectId } = scope(a);
      return { status: 200 as const, body: await services.reviews.queue(accountId, projectId, a.query) };
    },
    labelEvent: async (a: Args & { body: z.output<typeof LabelRequestSchema> }) => {
      const { accountId, projectId } = scope(a);
      return { status: 200 as const, body: await services.reviews.label(accountId, projectId, a.params?.requestId ?? '', a.body) };
    },
    exportLabels: async (a: Args & { query: { since?: number | undefined } }) => {
      const { accountId, projectId } = scope(a);
      return { status: 200 as const, body: await services.reviews.export(accountId, projectId, a.query.since) };
    },
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
