// The backend client: full events, event updates, search by linkedId and
// visit history, with a secret key. Built with ts-rest's initClient over the
// service's own contract, so request and result types cannot drift from it.
import type { ClientInferRequest, ClientInferResponseBody } from '@ts-rest/core';
import { eventsContract, visitsContract } from '@deviceid/contract';
import { AbortedError } from './errors.js';
import { createRawClient, unwrap, type CallOptions, type ClientOptions, type Credentials } from './transport.js';

export type FullEvent = ClientInferResponseBody<typeof eventsContract.getEvent, 200>;
/** `suspect`, `linkedId`, `tag`: at least one; `null` removes linkedId or tag. */
export type EventUpdate = ClientInferRequest<typeof eventsContract.updateEvent>['body'];
export type EventSearchResult = ClientInferResponseBody<typeof eventsContract.searchEvents, 200>;
export type VisitHistory = ClientInferResponseBody<typeof visitsContract.getVisits, 200>;
export type Visit = VisitHistory['visits'][number];

export interface ServerClientOptions extends ClientOptions {
  /** A server secret key (`svc_secret_…`). Keep it on the server. */
  secretKey: string;
}

export interface EventSearch {
  linkedId: string;
  /** 1–100, default 10. */
  limit?: number;
}

export interface VisitQuery {
  /** Only visits before this one: a visit `id`, or a Unix ms timestamp. */
  before?: string | number;
}

export interface VisitPagesQuery extends VisitQuery {
  /** Stop after this many pages. Default: all. */
  maxPages?: number;
}

export interface ServerClient {
  /** `GET /v1/events/:requestId`: the full event. NotFoundError for unknown ids and other accounts' events. */
  getEvent(requestId: string, options?: CallOptions): Promise<FullEvent>;
  /** `PATCH /v1/events/:requestId`: flag as suspect or replace linkedId/tag; the updated event. Not retried except on 429. */
  updateEvent(requestId: string, update: EventUpdate, options?: CallOptions): Promise<FullEvent>;
  /** `GET /v1/events?linkedId=`: events with this linkedId, newest first. */
  searchEvents(search: EventSearch, options?: CallOptions): Promise<EventSearchResult>;
  /** `GET /v1/demo/visits/:visitorId`: one page (at most 20 visits, newest first). */
  getVisits(visitorId: string, query?: VisitQuery, options?: CallOptions): Promise<VisitHistory>;
  /** Every page of the visit history, newest first, following the `before` cursor until a page is empty. */
  visitPages(visitorId: string, query?: VisitPagesQuery, options?: CallOptions): AsyncIterableIterator<VisitHistory>;
  /** Every visit of the visitor, newest first, fetched page by page as you iterate. */
  visits(visitorId: string, query?: VisitPagesQuery, options?: CallOptions): AsyncIterableIterator<Visit>;
}

const SECRET_PREFIX = 'svc_secret_';

/** A path segment: ts-rest inserts params verbatim and drops empty ones, so check and encode here. */
export function segment(name: string, value: unknown): string {
  if (typeof value !== 'string' || value.length === 0) throw new TypeError(`${name} must be a non-empty string`);
  return encodeURIComponent(value);
}

export function createServerClient(options: ServerClientOptions): ServerClient {
  const { secretKey } = options;
  if (typeof secretKey !== 'string' || !secretKey.startsWith(SECRET_PREFIX)) {
    // Never echo the value: it may be a real key of another kind.
    throw new TypeError(`secretKey must be a server secret key (${SECRET_PREFIX}…)`);
  }
  const credentials: Credentials = (auth): Record<string, string> => {
    if (auth === 'secretBearer') return { authorization: `Bearer ${secretKey}` };
    if (auth === 'secretKey') return { 'x-api-key': secretKey };
    return {};
  };
  const raw = createRawClient({ events: eventsContract, visits: visitsContract }, options, credentials);

  const getVisits = (visitorId: string, query: VisitQuery = {}, call: CallOptions = {}) => {
    const before = query.before === undefined ? undefined : String(query.before);
    return unwrap<VisitHistory>(() =>
      raw.visits.getVisits({ params: { visitorId: segment('visitorId', visitorId) }, query: before === undefined ? {} : { before }, call }),
    );
  };

  async function* visitPages(visitorId: string, query: VisitPagesQuery = {}, call: CallOptions = {}): AsyncIterableIterator<VisitHistory> {
    const { maxPages = Infinity } = query;
    let before: string | number | undefined = query.before;
    for (let n = 0; n < maxPages; n++) {
      if (call.signal?.aborted) throw new AbortedError('aborted', 'Visit paging was aborted', { cause: call.signal.reason });
      const page = await getVisits(visitorId, before === undefined ? {} : { before }, call);
      if (page.visits.length === 0) return;
      yield page;
      const next = page.visits[page.visits.length - 1]!.id;
      // A cursor that does not move would loop for ever: stop instead.
      if (next === before) return;
      before = next;
    }
  }

  async function* visits(visitorId: string, query: VisitPagesQuery = {}, call: CallOptions = {}): AsyncIterableIterator<Visit> {
    for await (const page of visitPages(visitorId, query, call)) yield* page.visits;
  }

  return {
    getEvent: (requestId, call = {}) =>
      unwrap<FullEvent>(() => raw.events.getEvent({ params: { requestId: segment('requestId', requestId) }, call })),
    updateEvent: (requestId, update, call = {}) =>
      unwrap<FullEvent>(() => raw.events.updateEvent({ params: { requestId: segment('requestId', requestId) }, body: update, call })),
    searchEvents: async (search, call = {}) => {
      if (typeof search?.linkedId !== 'string' || search.linkedId === '') throw new TypeError('linkedId must be a non-empty string');
      const query = search.limit === undefined ? { linkedId: search.linkedId } : { linkedId: search.linkedId, limit: search.limit };
      return unwrap<EventSearchResult>(() => raw.events.searchEvents({ query, call }));
    },
    getVisits,
    visitPages,
    visits,
  };
}
