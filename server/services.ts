// Every service, built once: the one place where modules are wired to each
// other. http/app.ts assembles Express around them and routes receive them in
// RouteDeps; main.ts starts their background work.
import type { Request } from 'express';
import type { Logger } from 'pino';
import { AdminService } from './accounts/admin.js';
import { MembersService } from './accounts/members.js';
import { PasswordChecker } from './accounts/passwordChecker.js';
import { AccountsService } from './accounts/service.js';
import { AuditLog } from './audit/log.js';
import type { Clock } from './clock.js';
import type { Config } from './config.js';
import type { LauncherStatus } from './database.js';
import { ClaimsService } from './decisions/claims.js';
import { Decider } from './decisions/decider.js';
import { ProjectLists } from './decisions/listCache.js';
import { LIST_LIMITS, ListsService } from './decisions/listsService.js';
import { ReviewsService } from './decisions/reviews.js';
import { RulesService } from './decisions/rules.js';
import { DeletionService } from './deletion/service.js';
import { DeviceFlowService } from './deviceflow/service.js';
import { botJudge, type BotJudge } from './bots/judge.js';
import type { Edge } from './edge/analyze.js';
import { EventsService } from './events/service.js';
import { ExplorerService } from './explorer/service.js';
import { IdentificationService } from './identification/service.js';
import { LinkedIdKeys } from './keys/linkedIds.js';
import { LinkedIdKeyService } from './projects/linkedIdKey.js';
import { KeysService } from './keys/service.js';
import { Meter } from './metering/meter.js';
import type { Metrics } from './metrics/registry.js';
import { ProjectChanges } from './projects/changes.js';
import { ProjectsService } from './projects/service.js';
import { DeviceCookies } from './proxy/cookie.js';
import { ProxyService, type ProxiedRequest } from './proxy/service.js';
import { ProxyTraffic } from './proxy/traffic.js';
import type { EdgeFacts } from './risk/edgeFacts.js';
import { SecretBox } from './sealing/secretBox.js';
import { SealingService } from './sealing/service.js';
import { EventSearchService } from './search/service.js';
import type { Store } from './store/index.js';
import { VisitorAliases } from './visitors/aliases.js';
import { RelatedVisitorsService } from './visitors/related.js';
import { VisitHistoryService } from './visitors/history.js';
import { WebhooksService } from './webhooks/service.js';

/** What the process provides: configuration, the database, the clock, the log and the IP data. */
export interface AppDeps {
  config: Config;
  store: Store;
  clock: Clock;
  logger: Logger;
  edge: Edge;
  /** The dev database launcher this process supervises, if any (shown by /readyz). */
  launcher?: { status(): LauncherStatus };
  /** Bot names and signatures (tests give one that reads a local key directory); default: built from the configuration. */
  bots?: BotJudge;
  /** How a change of a project's cached settings reaches the instance's processes; default: this process, and its cluster's workers. */
  changes?: ProjectChanges;
  /** Prometheus metrics (METRICS_PORT); none recorded without. */
  metrics?: Metrics;
}

export interface Services {
  /** Password strength at sign-up, in a worker thread that runs while sign-ups come. */
  passwords: PasswordChecker;
  accounts: AccountsService;
  admin: AdminService;
  /** An account's members, their roles and invitations to join it. */
  members: MembersService;
  /** Who changed what: every service records its changes here. */
  audit: AuditLog;
  keys: KeysService;
  projects: ProjectsService;
  meter: Meter;
  /** POST /v1/identify. */
  identification: IdentificationService;
  /** Reading and updating events. */
  events: EventsService;
  /** Visit histories. */
  visits: VisitHistoryService;
  /** A visitor's related visitors: the same machine's other browsers in a project. */
  related: RelatedVisitorsService;
  deviceFlow: DeviceFlowService;
  search: EventSearchService;
  /** The dashboard's events explorer, visitor timeline and a visitor's related visitors in a project. */
  explorer: ExplorerService;
  deletions: DeletionService;
  sealing: SealingService;
  /** The project's linkedId key, with which its server vouches for linkedIds. */
  linkedIdKey: LinkedIdKeyService;
  webhooks: WebhooksService;
  /** The project's ruleset: versions, hits, previews. */
  rules: RulesService;
  /** The project's lists of visitors, linkedIds, IPs, ASNs and countries. */
  lists: ListsService;
  /** The review queue and analysts' labels. */
  reviews: ReviewsService;
  /** RequestIds used by protected requests, once each. */
  claims: ClaimsService;
  /** First-party proxies: their secrets, whether a request is proxied, the device cookie, traffic figures. */
  proxy: ProxyService;
  /**
   * What the edge knows about the request (IP, location, network, TLS, HTTP);
   * for a proxied request, about the browser behind the proxy. A 503 ApiError
   * when the cluster primary does not answer.
   */
  edge(req: Request, proxied?: ProxiedRequest | null): Promise<EdgeFacts>;
  /** The client's IP as the edge sees it (TRUST_PROXY aware). */
  clientIp(req: Request): string;
}

/** What every route module receives. */
export type RouteDeps = AppDeps & { services: Services };

export function createServices(deps: AppDeps): Services {
  const { store, config, clock, logger } = deps;
  const audit = new AuditLog(store, clock);
  const members = new MembersService(store, config, clock, audit);
  const meter = new Meter(store, config.plans, clock, config.workers);
  const keys = new KeysService(store, clock, audit);
  const box = new SecretBox(config.serverSecret);
  const sealing = new SealingService(store, box, clock, audit);
  const aliases = new VisitorAliases(store);
  const related = new RelatedVisitorsService(store, aliases);
  const events = new EventsService(store, aliases, audit, related);
  const visits = new VisitHistoryService(store, aliases);
  const search = new EventSearchService(store, aliases, events);
  const webhooks = new WebhooksService(store, box, events, clock, logger, config.webhooksAllowPrivate, audit, deps.metrics);
  // Sealed results and webhooks reach identify through its hooks, on the project document it has read.
  const linkedIds = new LinkedIdKeys(config.serverSecret);
  // A change of the project's cached settings (ruleset, lists) reaches every process of the instance before it is answered.
  const changes = deps.changes ?? new ProjectChanges();
  const projectLists = new ProjectLists(store, clock);
  const decider = new Decider(store, projectLists, deps.metrics);
  changes.onChange((projectId) => {
    store.projects.forget(projectId);
    decider.forget(projectId);
  });
  const lists = new ListsService(store, clock, audit, LIST_LIMITS, changes);
  const identification = new IdentificationService(
    store,
    meter,
    clock,
    linkedIds,
    {
      respond: (project, result, decision) => sealing.respond(project, result, decision),
      withEvent: (project, event) => webhooks.outboxFor(project, event),
      stored: (project, event) => {
        meter.served(event);
        webhooks.stored(project, event);
      },
      decide: (project, event, signals) => decider.decide(project, event, signals),
    },
    config.visitorCacheSize,
  );
  deps.metrics?.watch({ visitorCache: () => identification.cache.counts });
  const bots = deps.bots ?? botJudge(config, clock);
  const passwords = new PasswordChecker(config.passwordCheck);
  const proxy = new ProxyService(store, clock, new DeviceCookies(config.serverSecret), new ProxyTraffic(store.proxyStats, clock), audit);
  const deletions = new DeletionService(store, aliases, clock, audit, async (accountId, requestIds) => {
    await webhooks.forgetEvents(accountId, requestIds);
    await store.audit.forgetEvents(accountId, requestIds);
  });
  return {
    passwords,
    accounts: new AccountsService(store, config, clock, (accountId, period) => meter.month(accountId, period), members, audit, passwords),
    admin: new AdminService(store, config, clock, audit),
    members,
    audit,
    keys,
    projects: new ProjectsService(store, clock, audit),
    meter,
    identification,
    events,
    visits,
    related,
    deviceFlow: new DeviceFlowService(store, keys, config, clock, audit),
    search,
    explorer: new ExplorerService(store, search, visits, related, meter, clock),
    deletions,
    sealing,
    linkedIdKey: new LinkedIdKeyService(store, linkedIds, clock, audit),
    webhooks,
    rules: new RulesService(store, clock, audit, changes, projectLists),
    lists,
    reviews: new ReviewsService(store, clock, audit, lists, webhooks, aliases),
    claims: new ClaimsService(store, clock, aliases),
    proxy,
    edge: async (req: Request, proxied?: ProxiedRequest | null) => {
      const network = await deps.edge.analyze(req, proxied ? { clientIp: proxied.clientIp } : undefined);
      const authority = proxied?.host ?? req.headers.host ?? '';
      const collected = (req.body as { signals?: { userAgent?: { value?: { userAgent?: unknown } } } } | undefined)?.signals?.userAgent?.value?.userAgent;
      const judged = { method: req.method, path: req.originalUrl, headers: req.headers, authority };
      return { ...network, bot: await bots.judge(judged, network.ip, typeof collected === 'string' ? collected : undefined) };
    },
    clientIp: (req: Request) => deps.edge.clientIp(req),
  };
}
