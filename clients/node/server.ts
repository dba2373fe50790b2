// The backend client: full events, event updates, event search, visit
// history and the decision routes (decisions.ts), with a secret key. Built with ts-rest's initClient over the
// service's own contract, so request and result types cannot drift from it.
import type { ClientInferRequest, ClientInferResponseBody } from '@ts-rest/core';
import { decisionsContract, enforcementContract, eventsContract, visitorsContract, visitsContract } from '@deviceid/contract';
import { decisionMethods, type DecisionMethods } from './decisions.js';
import { AbortedError } from './errors.js';
import { createRawClient, unwrap, type CallOptions, type ClientOptions, type Credentials } from './transport.js';

export type FullEvent = ClientInferResponseBody<typeof eventsContract.getEvent, 200>;
/** `suspect`, `linkedId`, `tag`: at least one; `null` removes linkedId or tag. */
export type EventUpdate = ClientInferRequest<typeof eventsContract.updateEvent>['body'];
export type EventSearchResult = ClientInferResponseBody<typeof eventsContract.searchEvents, 200>;
export type VisitHistory = ClientInferResponseBody<typeof visitsContract.getVisits, 200>;
export type Visit = VisitHistory['visits'][number];
export type VisitorDeletion = ClientInferResponseBody<typeof visitorsContract.deleteVisitor, 202>;
export type RelatedVisitors = ClientInferResponseBody<typeof visitorsContract.getRelatedVisitors, 200>;
export type RelatedVisitor = RelatedVisitors['relatedVisitors'][number];

export interface RelatedQuery {
  /** Related visitors per page, 1–50, default 10. */
  limit?: number;
  /** The `paginationKey` of the previous page. */
  paginationKey?: string;
}

export interface ServerClientOptions extends ClientOptions {
  /** A server secret key (`svc_secret_…`). Keep it on the server. */
  secretKey: string;
}

/** Filters of `GET /v1/events`; every one given must match. */
export interface EventSearch {
  visitorId?: string;
  /** Events answered this high-recall id, or of its visitor itself. */
  highRecallVisitorId?: string;
  linkedId?: string;
  /** An IP address or a CIDR (`203.0.113.0/24`, `2001:db8::/48`). */
  ip?: string;
  bot?: 'good' | 'bad' | 'none' | 'all';
  suspect?: boolean;
  vpn?: boolean;
  tor?: boolean;
  proxy?: boolean;
  incognito?: boolean;
  tampering?: boolean;
  virtualMachine?: boolean;
  devtools?: boolean;
  ipBlocklist?: boolean;
  /** Only events whose suspectScore is at least this (0–100). */
  minSuspectScore?: number;
  /** ISO 3166-1 alpha-2 country of the IP location (any case). */
  country?: string;
  /** Unix ms (or a Date): only events at or after it. */
  start?: number | Date;
  /** Unix ms (or a Date): only events at or before it. */
  end?: number | Date;
  /** Events per page, 1–100, default 10. */
  limit?: number;
  /** Oldest first. */
  reverse?: boolean;
  /** The `paginationKey` of the previous page. */
  paginationKey?: string;
}

export interface EventSearchPagesQuery extends EventSearch {
  /** Stop after this many pages. Default: all. */
  maxPages?: number;
}

export interface VisitQuery {
  /** Only visits before this one: a visit `id`, or a Unix ms timestamp. */
  before?: string | number;
  /** The `paginationKey` of the previous page (instead of `before`). */
  paginationKey?: string;
}

export interface VisitPagesQuery extends VisitQuery {
  /** Stop after this many pages. Default: all. */
  maxPages?: number;
}

/** Events, visits and visitors, and the decision routes of DecisionMethods (rules, lists, reviews, claims). */
export interface ServerClient extends DecisionMethods {
  /** `GET /v1/events/:requestId`: the full event. NotFoundError for unknown ids and other accounts' events. */
  getEvent(requestId: string, options?: CallOptions): Promise<FullEvent>;
  /** `PATCH /v1/events/:requestId`: flag as suspect or replace linkedId/tag; the updated event. Not retried except on 429. */
  updateEvent(requestId: string, update: EventUpdate, options?: CallOptions): Promise<FullEvent>;
  /** `GET /v1/events`: one page of the events matching every filter, newest first (`reverse`: oldest first); `paginationKey` when there may be more. */
  searchEvents(search?: EventSearch, options?: CallOptions): Promise<EventSearchResult>;
  /** Every page of a search, following `paginationKey` until there is none. */
  searchEventPages(search?: EventSearchPagesQuery, options?: CallOptions): AsyncIterableIterator<EventSearchResult>;
  /** Every matching event, newest first (`reverse`: oldest first), fetched page by page as you iterate. */
  searchAllEvents(search?: EventSearchPagesQuery, options?: CallOptions): AsyncIterableIterator<FullEvent>;
  /** `GET /v1/demo/visits/:visitorId`: one page (at most 20 visits, newest first). */
  getVisits(visitorId: string, query?: VisitQuery, options?: CallOptions): Promise<VisitHistory>;
  /** Every page of the visit history, newest first, following `paginationKey` while a page carries one. */
  visitPages(visitorId: string, query?: VisitPagesQuery, options?: CallOptions): AsyncIterableIterator<VisitHistory>;
  /**
   * `DELETE /v1/visitors/:visitorId`: deletes the device's data (privacy
   * request). Resolves once the deletion is queued (202) with its id and
   * status; repeat it to see the status. NotFoundError for unknown visitors
   * and other accounts'. Retried like a GET: it is idempotent.
   */
  deleteVisitor(visitorId: string, options?: CallOptions): Promise<VisitorDeletion>;
  /** Every visit of the visitor, newest first, fetched page by page as you iterate. */
  visits(visitorId: string, query?: VisitPagesQuery, options?: CallOptions): AsyncIterableIterator<Visit>;
  /**
   * `GET /v1/visitors/:visitorId/related`: one page of the visitor's related
   * visitors in your key's project (the same machine in other browsers or
   * profiles), each with its probability and evidence, the most recently
   * seen together first. NotFoundError for unknown visitors and other accounts'.
   */
  getRelatedVisitors(visitorId: string, query?: RelatedQuery, options?: CallOptions): Promise<RelatedVisitors>;
  /** Every related visitor, fetched page by page as you iterate. */
  relatedVisitors(visitorId: string, options?: CallOptions): AsyncIterableIterator<RelatedVisitor>;
}

const SECRET_PREFIX = 'svc_secret_';

/** A path segment: ts-rest inserts params verbatim and drops empty ones, so check and encode here. */
export function segment(name: string, value: unknown): string {
  if (typeof value !== 'string' || value.length === 0) throw new TypeError(`${name} must be a non-empty string`);
  return encodeURIComponent(value);
}

const STRING_FILTERS = new Set(['linkedId', 'visitorId', 'highRecallVisitorId', 'ip', 'paginationKey', 'country']);
const BOOLEAN_FILTERS = new Set(['suspect', 'vpn', 'tor', 'proxy', 'incognito', 'tampering', 'virtualMachine', 'devtools', 'ipBlocklist', 'reverse']);

/** The query of a search: Dates as Unix ms; unset filters left out (ts-rest writes booleans as `true`/`false`). */
function searchQuery(search: EventSearch): Record<string, string | number | boolean> {
  if (typeof search !== 'object' || search === null) throw new TypeError('search must be an object of filters');
  const out: Record<string, string | number | boolean> = {};
  for (const [name, value] of Object.entries(search)) {
    if (value === undefined) continue;
    if (STRING_FILTERS.has(name)) {
      if (typeof value !== 'string' || value === '') throw new TypeError(`${name} must be a non-empty string`);
      out[name] = value;
    } else if (BOOLEAN_FILTERS.has(name)) {
      if (typeof value !== 'boolean') throw new TypeError(`${name} must be a boolean`);
      out[name] = value;
    } else if (name === 'start' || name === 'end') {
      const ms: unknown = value instanceof Date ? value.getTime() : value;
      if (typeof ms !== 'number' || !Number.isFinite(ms)) throw new TypeError(`${name} must be a Unix ms time or a Date`);
      out[name] = ms;
    } else if (name === 'limit' || name === 'bot' || name === 'minSuspectScore') {
      out[name] = value as string | number;
    } else if (name !== 'maxPages') {
      throw new TypeError(`unknown search filter ${name}`);
    }
  }
  return out;
}

export function createServerClient(options: ServerClientOptions): ServerClient {
  const { secretKey } = options;
  if (typeof secretKey !== 'string' || !secretKey.startsWith(SECRET_PREFIX)) {
    // Never echo the value: it may be a real key of another kind.
    throw new TypeError(`secretKey must be a server secret key (${SECRET_PREFIX}…)`);
  }
  const credentials: Credentials = (auth): Record<string, string> => {
    return auth === 'secretKey' ? { authorization: `Bearer ${secretKey}` } : {};
  };
  const raw = createRawClient(
    { events: eventsContract, visits: visitsContract, visitors: visitorsContract, decisions: decisionsContract, enforcement: enforcementContract },
    options,
    credentials,
  );

  const getVisits = (visitorId: string, query: VisitQuery = {}, call: CallOptions = {}) => {
    const q: { before?: string; paginationKey?: string } = {};
    if (query.before !== undefined) q.before = String(query.before);
    if (query.paginationKey !== undefined) q.paginationKey = query.paginationKey;
    return unwrap<VisitHistory>(() => raw.visits.getVisits({ params: { visitorId: segment('visitorId', visitorId) }, query: q, call }));
  };

  async function* visitPages(visitorId: string, query: VisitPagesQuery = {}, call: CallOptions = {}): AsyncIterableIterator<VisitHistory> {
    const { maxPages = Infinity, ...first } = query;
    let cursor: VisitQuery = first;
    for (let n = 0; n < maxPages; n++) {
      if (call.signal?.aborted) throw new AbortedError('aborted', 'Visit paging was aborted', { cause: call.signal.reason });
      const page = await getVisits(visitorId, cursor, call);
      if (page.visits.length === 0) return;
      yield page;
      // A key that does not move would loop for ever: stop instead.
      if (page.paginationKey === undefined || page.paginationKey === cursor.paginationKey) return;
      cursor = { paginationKey: page.paginationKey };
    }
  }

  const searchEvents = async (search: EventSearch = {}, call: CallOptions = {}) => {
    const query = searchQuery(search);
    return unwrap<EventSearchResult>(() => raw.events.searchEvents({ query: query, call }));
  };

  async function* searchEventPages(search: EventSearchPagesQuery = {}, call: CallOptions = {}): AsyncIterableIterator<EventSearchResult> {
    const { maxPages = Infinity, ...filters } = search;
    let key = filters.paginationKey;
    for (let n = 0; n < maxPages; n++) {
      if (call.signal?.aborted) throw new AbortedError('aborted', 'Event search paging was aborted', { cause: call.signal.reason });
      const page = await searchEvents({ ...filters, ...(key === undefined ? {} : { paginationKey: key }) }, call);
      yield page;
      // A key that does not move would loop for ever: stop instead.
      if (page.paginationKey === undefined || page.paginationKey === key) return;
      key = page.paginationKey;
    }
  }

  async function* searchAllEvents(search: EventSearchPagesQuery = {}, call: CallOptions = {}): AsyncIterableIterator<FullEvent> {
    for await (const page of searchEventPages(search, call)) yield* page.events;
  }

  const getRelatedVisitors = (visitorId: string, query: RelatedQuery = {}, call: CallOptions = {}) => {
    if (typeof query !== 'object' || query === null) throw new TypeError('query must be an object');
    const q: { limit?: number; paginationKey?: string } = {};
    if (query.limit !== undefined) q.limit = query.limit;
    if (query.paginationKey !== undefined) q.paginationKey = query.paginationKey;
    return unwrap<RelatedVisitors>(() => raw.visitors.getRelatedVisitors({ params: { visitorId: segment('visitorId', visitorId) }, query: q, call }));
  };

  async function* relatedVisitors(visitorId: string, call: CallOptions = {}): AsyncIterableIterator<RelatedVisitor> {
    let key: string | undefined;
    for (;;) {
      if (call.signal?.aborted) throw new AbortedError('aborted', 'Related visitor paging was aborted', { cause: call.signal.reason });
      const page = await getRelatedVisitors(visitorId, { limit: 50, ...(key === undefined ? {} : { paginationKey: key }) }, call);
      yield* page.relatedVisitors;
      // A key that does not move would loop for ever: stop instead.
      if (page.paginationKey === undefined || page.paginationKey === key) return;
      key = page.paginationKey;
    }
  }

  async function* visits(visitorId: string, query: VisitPagesQuery = {}, call: CallOptions = {}): AsyncIterableIterator<Visit> {
    for await (const page of visitPages(visitorId, query, call)) yield* page.visits;
  }

  return {
    ...decisionMethods(raw, segment),
    getEvent: (requestId, call = {}) => unwrap<FullEvent>(() => raw.events.getEvent({ params: { requestId: segment('requestId', requestId) }, call })),
    updateEvent: (requestId, update, call = {}) =>
      unwrap<FullEvent>(() => raw.events.updateEvent({ params: { requestId: segment('requestId', requestId) }, body: update, call })),
    searchEvents,
    searchEventPages,
    searchAllEvents,
    getVisits,
    deleteVisitor: (visitorId, call = {}) =>
      unwrap<VisitorDeletion>(() => raw.visitors.deleteVisitor({ params: { visitorId: segment('visitorId', visitorId) }, call }), 202),
    visitPages,
    visits,
    getRelatedVisitors,
    relatedVisitors,
  };
}
