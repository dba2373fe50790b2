// The decision routes of the server client (secret key): the ruleset and its
// versions, previews and stats; lists and their entries; the review queue,
// labels and their export; claims of protected requests. Types come from the
// contract (contract/decisions.ts) through ts-rest, so they cannot drift.
//
// Retries (transport.ts): reads are retried like every GET; a preview changes
// nothing and is retried too; every other write is retried only on 429 or a
// refused connection (the service did no work), never after the request may
// have reached it. `deleteList` is a DELETE, retried: a 404 on a retry means
// an earlier attempt deleted the list, and resolves. `claimEvent` is never
// retried once sent: a claim that reached the service used the requestId up,
// and repeating it would answer 409 `request_id_used` for the request it
// should have let through.
import type { ClientInferRequest, ClientInferResponseBody } from '@ts-rest/core';
import type { decisionsContract, enforcementContract, RISK_FACTORS } from '@deviceid/contract';
import { AbortedError, NotFoundError } from './errors.js';
import { unwrap, type CallOptions, type RawClient } from './transport.js';

type D = typeof decisionsContract;

/** A project's ruleset as of one version. */
export type Ruleset = ClientInferResponseBody<D['getRuleset'], 200>;
/** One rule of a ruleset. */
export type Rule = Ruleset['rules'][number];
/** The body of `putRuleset`: the whole ruleset (`enabled` defaults to true, `mode` to live, `defaultAction` to allow). */
export type RulesetInput = ClientInferRequest<D['putRuleset']>['body'];
/** A rule as sent: a missing `id` is assigned. */
export type RuleInput = RulesetInput['rules'][number];
/** What a block answers: status (4xx), headers, body. */
export type BlockResponse = NonNullable<Rule['response']>;
/** A draft expression to try on recent events (`events` and `days` default to the most allowed). */
export type RulePreviewRequest = ClientInferRequest<D['previewRule']>['body'];
export type RulePreview = ClientInferResponseBody<D['previewRule'], 200>;
export type RuleStats = ClientInferResponseBody<D['getRuleStats'], 200>;

/** A list's description and size (not its entries). */
export type ListInfo = ClientInferResponseBody<D['getList'], 200>;
/** The body of `createList`: name, kind, optional description. */
export type NewList = ClientInferRequest<D['createList']>['body'];
export type ListEntry = ClientInferResponseBody<D['listEntries'], 200>['entries'][number];
/** One page of a list's entries, by value; `cursor` when there may be more. */
export type ListEntriesPage = ClientInferResponseBody<D['listEntries'], 200>;
/** Values to add (or update: note, expiry) and to remove, at most 10 000 of each. */
export type ListEntriesChange = ClientInferRequest<D['changeListEntries']>['body'];
export type ListEntriesChanged = ClientInferResponseBody<D['changeListEntries'], 200>;

export interface ListEntriesQuery {
  /** Only values starting with this. */
  prefix?: string;
  /** The `cursor` of the previous page. */
  cursor?: string;
  /** Entries per page, 1–1000, default 100. */
  limit?: number;
}

export interface ListEntryPagesQuery extends ListEntriesQuery {
  /** Stop after this many pages. Default: all. */
  maxPages?: number;
}

/** One page of the review queue, newest first; `paginationKey` when there may be more. */
export type ReviewQueue = ClientInferResponseBody<D['listReviews'], 200>;
export type ReviewItem = ReviewQueue['items'][number];
export type LabelRequest = ClientInferRequest<D['labelEvent']>['body'];
export type Label = ClientInferResponseBody<D['labelEvent'], 200>;

export interface ReviewQuery {
  /** `pending` (default), `labeled` or `all`. */
  status?: 'pending' | 'labeled' | 'all';
  /** Items per page, 1–100, default 20. */
  limit?: number;
  /** The `paginationKey` of the previous page. */
  paginationKey?: string;
}

export interface ReviewPagesQuery extends ReviewQuery {
  /** Stop after this many pages. Default: all. */
  maxPages?: number;
}

/** What the project's rules decided for an event. */
export type Decision = Claim['decision'];
/** The decision for a protected request: its requestId cannot be used again. */
export type Claim = ClientInferResponseBody<typeof enforcementContract.claimEvent, 200>;

export interface ClaimOptions extends CallOptions {
  /** Refuse (GoneError, `request_id_expired`) an event older than this, 1–86 400 s. Default 300. */
  maxAgeSeconds?: number;
}

/** One line of the labels export: the label with what the event scored. */
export interface LabelExportLine {
  requestId: string;
  visitorId: string;
  linkedId?: string;
  timestamp: number;
  label: Label;
  /** null for events stored before the project had decisions. */
  decision: Decision | null;
  confidence: number;
  botProbability: number;
  suspectScore: number;
  /** Active risk indicators (more values may be added). */
  riskFactors: Array<(typeof RISK_FACTORS)[number]>;
  ip: string;
  country: string;
}

export interface DecisionMethods {
  /** `GET /v1/ruleset`: the current ruleset (version 0, no rules, allow: none saved yet). */
  getRuleset(options?: CallOptions): Promise<Ruleset>;
  /**
   * `PUT /v1/ruleset`: replaces the ruleset as a new version, in force on the
   * next identify. ValidationError (400 `invalid_rules`, `body.details` with
   * each error's rule, line and column) when an expression does not compile;
   * ConflictError (409 `ruleset_conflict`) when `baseVersion` is not the
   * current version. Not retried except on 429: after a lost answer, read the
   * ruleset to see whether the version was saved.
   */
  putRuleset(ruleset: RulesetInput, options?: CallOptions): Promise<Ruleset>;
  /** `GET /v1/ruleset/versions/:version`: a past version (the one an event's `decision.rulesetVersion` names). */
  getRulesetVersion(version: number, options?: CallOptions): Promise<Ruleset>;
  /** `POST /v1/ruleset/preview`: how a draft expression fares on recent events. Changes nothing, so retried like a GET. */
  previewRule(preview: RulePreviewRequest, options?: CallOptions): Promise<RulePreview>;
  /** `GET /v1/ruleset/stats`: hits per rule over 24 hours and 7 days. */
  getRuleStats(options?: CallOptions): Promise<RuleStats>;

  /** `GET /v1/lists`: the project's lists, by name. */
  listLists(options?: CallOptions): Promise<ListInfo[]>;
  /** `POST /v1/lists`: a new, empty list. ConflictError (409 `list_exists`) for a name in use or a project at its limit. */
  createList(list: NewList, options?: CallOptions): Promise<ListInfo>;
  /** `GET /v1/lists/:name`. NotFoundError for unknown lists. */
  getList(name: string, options?: CallOptions): Promise<ListInfo>;
  /** `PATCH /v1/lists/:name`: changes the description. */
  updateList(name: string, change: { description: string }, options?: CallOptions): Promise<ListInfo>;
  /**
   * `DELETE /v1/lists/:name`: the list and its entries (rules naming it stop
   * matching it); resolves to the list as it was. NotFoundError for an
   * unknown list; retried like every DELETE, and a 404 on a retry resolves
   * to null (an earlier attempt deleted it, and its answer was lost).
   */
  deleteList(name: string, options?: CallOptions): Promise<ListInfo | null>;
  /** `GET /v1/lists/:name/entries`: one page of entries, by value. */
  getListEntries(name: string, query?: ListEntriesQuery, options?: CallOptions): Promise<ListEntriesPage>;
  /** Every page of a list's entries, following `cursor` until there is none. */
  listEntryPages(name: string, query?: ListEntryPagesQuery, options?: CallOptions): AsyncIterableIterator<ListEntriesPage>;
  /** Every entry of a list, by value, fetched page by page as you iterate. */
  allListEntries(name: string, query?: ListEntryPagesQuery, options?: CallOptions): AsyncIterableIterator<ListEntry>;
  /**
   * `POST /v1/lists/:name/entries`: adds (or updates) and removes entries in
   * bulk. ValidationError (400 `invalid_list_entries`, each bad value by
   * index in `body.details`) and nothing changes; ConflictError (409
   * `list_full`). Not retried except on 429; repeating it yourself is safe
   * (an add of a present value updates it, a removal of an absent one is
   * ignored), only the counts then describe the repetition.
   */
  changeListEntries(name: string, change: ListEntriesChange, options?: CallOptions): Promise<ListEntriesChanged>;

  /** `GET /v1/reviews`: one page of the review queue (pending by default), newest first. */
  listReviews(query?: ReviewQuery, options?: CallOptions): Promise<ReviewQueue>;
  /** Every page of the review queue, following `paginationKey` until there is none. */
  reviewPages(query?: ReviewPagesQuery, options?: CallOptions): AsyncIterableIterator<ReviewQueue>;
  /** Every item of the review queue, newest first, fetched page by page as you iterate. */
  allReviews(query?: ReviewPagesQuery, options?: CallOptions): AsyncIterableIterator<ReviewItem>;
  /**
   * `POST /v1/events/:requestId/label`: labels an event fraud or legitimate
   * (a second label replaces the first), adding its visitorId, linkedId or IP
   * to the lists of `addTo` in the same step. NotFoundError for an unknown
   * event or list; ConflictError (409 `list_kind_mismatch`). Not retried
   * except on 429.
   */
  labelEvent(requestId: string, label: LabelRequest, options?: CallOptions): Promise<Label>;
  /** `GET /v1/labels`: every label of the project (`since`: made at or after this Unix ms time), one parsed object per JSON line, oldest event first. */
  exportLabels(query?: { since?: number | Date }, options?: CallOptions): Promise<LabelExportLine[]>;
  /** The same export as the service sends it: JSON lines (`application/x-ndjson`), each ending in a newline; '' when there are none. */
  exportLabelsText(query?: { since?: number | Date }, options?: CallOptions): Promise<string>;

  /**
   * `POST /v1/events/:requestId/claim`: uses a requestId for one protected
   * request and answers its decision (what `protect()` calls). The first
   * claim succeeds; ConflictError (409 `request_id_used`) for a replay,
   * GoneError (410 `request_id_expired`) for an event older than
   * `maxAgeSeconds` (not used up by that refusal), NotFoundError (404
   * `event_not_found`) for an unknown id or another project's.
   *
   * Never retried once it may have reached the service (only on 429 and a
   * refused connection, when nothing happened): a claim whose answer was lost
   * (TimeoutError, NetworkError, ServerError) may have used the requestId up,
   * and a repeat would answer 409. After such a failure the page should
   * identify again for a fresh requestId.
   */
  claimEvent(requestId: string, options?: ClaimOptions): Promise<Claim>;
}

/** The routes the decision methods call, as one raw client. */
export type DecisionRouters = { decisions: typeof decisionsContract; enforcement: typeof enforcementContract };

type Segment = (name: string, value: unknown) => string;

function unixMs(name: string, value: number | Date | undefined): number | undefined {
  if (value === undefined) return undefined;
  const ms: unknown = value instanceof Date ? value.getTime() : value;
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) throw new TypeError(`${name} must be a Unix ms time or a Date`);
  return Math.floor(ms);
}

function parseLines(text: string): LabelExportLine[] {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as LabelExportLine);
}

export function decisionMethods(raw: RawClient<DecisionRouters>, segment: Segment): DecisionMethods {
  const d = raw.decisions;
  const name = (n: string) => segment('name', n);

  const getListEntries = (list: string, query: ListEntriesQuery = {}, call: CallOptions = {}) => {
    const q: { prefix?: string; cursor?: string; limit?: number } = {};
    if (query.prefix !== undefined) q.prefix = query.prefix;
    if (query.cursor !== undefined) q.cursor = query.cursor;
    if (query.limit !== undefined) q.limit = query.limit;
    return unwrap<ListEntriesPage>(() => d.listEntries({ params: { name: name(list) }, query: q, call }));
  };

  async function* listEntryPages(list: string, query: ListEntryPagesQuery = {}, call: CallOptions = {}): AsyncIterableIterator<ListEntriesPage> {
    const { maxPages = Infinity, ...first } = query;
    let cursor = first.cursor;
    for (let n = 0; n < maxPages; n++) {
      if (call.signal?.aborted) throw new AbortedError('aborted', 'List entry paging was aborted', { cause: call.signal.reason });
      const page = await getListEntries(list, { ...first, ...(cursor === undefined ? {} : { cursor }) }, call);
      yield page;
      // A cursor that does not move would loop for ever: stop instead.
      if (page.cursor === undefined || page.cursor === cursor) return;
      cursor = page.cursor;
    }
  }

  const listReviews = (query: ReviewQuery = {}, call: CallOptions = {}) => {
    const q: { status?: ReviewQuery['status']; limit?: number; paginationKey?: string } = {};
    if (query.status !== undefined) q.status = query.status;
    if (query.limit !== undefined) q.limit = query.limit;
    if (query.paginationKey !== undefined) q.paginationKey = query.paginationKey;
    return unwrap<ReviewQueue>(() => d.listReviews({ query: q, call }));
  };

  async function* reviewPages(query: ReviewPagesQuery = {}, call: CallOptions = {}): AsyncIterableIterator<ReviewQueue> {
    const { maxPages = Infinity, ...first } = query;
    let key = first.paginationKey;
    for (let n = 0; n < maxPages; n++) {
      if (call.signal?.aborted) throw new AbortedError('aborted', 'Review queue paging was aborted', { cause: call.signal.reason });
      const page = await listReviews({ ...first, ...(key === undefined ? {} : { paginationKey: key }) }, call);
      yield page;
      if (page.paginationKey === undefined || page.paginationKey === key) return;
      key = page.paginationKey;
    }
  }

  const exportLabelsText = async (query: { since?: number | Date } = {}, call: CallOptions = {}) => {
    const since = unixMs('since', query.since);
    const body = await unwrap<unknown>(() => d.exportLabels({ query: since === undefined ? {} : { since }, call }));
    return typeof body === 'string' ? body : '';
  };

  return {
    getRuleset: (call = {}) => unwrap<Ruleset>(() => d.getRuleset({ call })),
    putRuleset: (ruleset, call = {}) => unwrap<Ruleset>(() => d.putRuleset({ body: ruleset, call })),
    getRulesetVersion: async (version, call = {}) => {
      if (!Number.isInteger(version) || version < 1) throw new TypeError('version must be a positive integer');
      return unwrap<Ruleset>(() => d.getRulesetVersion({ params: { version }, call }));
    },
    previewRule: (preview, call = {}) => unwrap<RulePreview>(() => d.previewRule({ body: preview, call, retrySafe: true })),
    getRuleStats: (call = {}) => unwrap<RuleStats>(() => d.getRuleStats({ call })),

    listLists: async (call = {}) => (await unwrap<{ lists: ListInfo[] }>(() => d.listLists({ call }))).lists,
    createList: (list, call = {}) => unwrap<ListInfo>(() => d.createList({ body: list, call }), 201),
    getList: (list, call = {}) => unwrap<ListInfo>(() => d.getList({ params: { name: name(list) }, call })),
    updateList: (list, change, call = {}) => unwrap<ListInfo>(() => d.updateList({ params: { name: name(list) }, body: change, call })),
    deleteList: async (list, call = {}) => {
      try {
        return await unwrap<ListInfo>(() => d.deleteList({ params: { name: name(list) }, call }));
      } catch (err) {
        // A retry after an attempt whose answer was lost: the list is gone, as asked.
        if (err instanceof NotFoundError && err.attempts > 1) return null;
        throw err;
      }
    },
    getListEntries,
    listEntryPages,
    allListEntries: async function* (list, query = {}, call = {}) {
      for await (const page of listEntryPages(list, query, call)) yield* page.entries;
    },
    changeListEntries: (list, change, call = {}) => unwrap<ListEntriesChanged>(() => d.changeListEntries({ params: { name: name(list) }, body: change, call })),

    listReviews,
    reviewPages,
    allReviews: async function* (query = {}, call = {}) {
      for await (const page of reviewPages(query, call)) yield* page.items;
    },
    labelEvent: (requestId, label, call = {}) =>
      unwrap<Label>(() => d.labelEvent({ params: { requestId: segment('requestId', requestId) }, body: label, call })),
    exportLabels: async (query = {}, call = {}) => parseLines(await exportLabelsText(query, call)),
    exportLabelsText,

    claimEvent: async (requestId, options = {}) => {
      const { maxAgeSeconds, ...call } = options;
      if (maxAgeSeconds !== undefined && !(Number.isInteger(maxAgeSeconds) && maxAgeSeconds >= 1 && maxAgeSeconds <= 86_400)) {
        throw new TypeError('maxAgeSeconds must be an integer from 1 to 86400');
      }
      return unwrap<Claim>(() =>
        raw.enforcement.claimEvent({
          params: { requestId: segment('requestId', requestId) },
          body: maxAgeSeconds === undefined ? {} : { maxAgeSeconds },
          call,
        }),
      );
    },
  };
}
