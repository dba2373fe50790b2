// Decisions (issue 35): per project, an ordered ruleset of CEL expressions
// over a typed view of each event decides allow, challenge, review or block
// on every identify; named lists feed the rules; events a rule sends to
// review wait for an analyst's label. Each route exists twice with the same
// schemas: under /v1 for the project's secret key (rules kept in code), and
// under /api/projects/:projectId for the dashboard (session, by role).
// A decision reaches the customer's backend in the full event, webhooks and
// sealed results, never in the answer a page reads.
import { z } from 'zod';
import { csrfResponses, sessionRoutes } from './account.js';
import {
  commonErrorResponses,
  described,
  describedOther,
  errorResponse,
  initContract,
  meta,
  queryInteger,
  RequestIdSchema,
  TimestampMs,
  VisitorIdSchema,
} from './common.js';
import { RULE_ACTIONS, RULE_EXPRESSION_MAX, RULE_MODES } from './ruleFields.js';

export { RULE_ACTIONS, RULE_EXPRESSION_MAX, RULE_MODES } from './ruleFields.js';

const c = initContract();

export const DECISION_LIMITS = {
  rules: 200,
  blockHeaders: 10,
  blockBodyBytes: 4096,
  lists: 50,
  listEntries: 100_000,
  entriesPerRequest: 10_000,
  previewEvents: 10_000,
  previewDays: 7,
  previewSample: 20,
  noteChars: 500,
} as const;

export const RuleActionSchema = z.enum(RULE_ACTIONS).openapi({
  title: 'RuleAction',
  description:
    '`allow`: let the request through; `challenge`: ask for more proof (a CAPTCHA, a second factor); `review`: let it through and queue the event for an analyst; `block`: refuse it with the rule’s response',
});

const headerName = /^[a-z0-9!#$%&'*+.^_`|~-]{1,64}$/;
const FORBIDDEN_HEADERS = new Set(['content-length', 'transfer-encoding', 'connection', 'set-cookie', 'host', 'upgrade', 'trailer']);

export const BlockResponseSchema = z
  .object({
    status: z.number().int().min(400).max(499).describe('The HTTP status to answer (4xx)'),
    headers: z
      .record(
        z
          .string()
          .max(1000)
          .regex(/^[^\r\n]*$/, 'must be one line'),
      )
      .refine((h) => Object.keys(h).length <= DECISION_LIMITS.blockHeaders, `at most ${DECISION_LIMITS.blockHeaders} headers`)
      .refine((h) => Object.keys(h).every((n) => headerName.test(n)), 'header names must be lowercase HTTP tokens')
      .refine((h) => Object.keys(h).every((n) => !FORBIDDEN_HEADERS.has(n)), `none of ${[...FORBIDDEN_HEADERS].join(', ')}`)
      .optional()
      .describe('Headers to send (lowercase names), e.g. `{"content-type": "application/json"}`'),
    body: z
      .string()
      .refine((b) => new TextEncoder().encode(b).length <= DECISION_LIMITS.blockBodyBytes, `at most ${DECISION_LIMITS.blockBodyBytes} bytes`)
      .optional()
      .describe(`The body to send (at most ${DECISION_LIMITS.blockBodyBytes} bytes)`),
  })
  .strict()
  .openapi({ title: 'BlockResponse', description: 'What the enforcement middleware answers for a block: status, headers and body.' });

export const RuleIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/, 'must be 1–64 letters, digits, _ or -, starting with a letter or digit')
  .openapi({ example: 'block-bad-bots' });

export const RuleSchema = z
  .object({
    id: RuleIdSchema.describe('Stable within the project; events, hits and search name the rule by it'),
    name: z.string().min(1).max(100).describe('For people'),
    expression: z
      .string()
      .min(1)
      .max(RULE_EXPRESSION_MAX)
      .describe('A CEL expression over the event view that is true when the rule matches (the fields: /docs/decisions on the service)'),
    action: RuleActionSchema,
    enabled: z.boolean().describe('A disabled rule is never evaluated'),
    mode: z
      .enum(RULE_MODES)
      .describe('`live`: the first live rule that matches decides; `test`: evaluated on every event and recorded in `testMatches`, never acting'),
    // For `block` only: what to answer (default 403 with a JSON error).
    response: BlockResponseSchema.optional(),
  })
  .strict()
  .refine((r) => r.response === undefined || r.action === 'block', { message: 'response is only for block rules', path: ['response'] })
  .openapi({ title: 'Rule', description: 'One rule of a ruleset.' });

export const RuleInputSchema = z
  .object({
    id: RuleIdSchema.optional().describe('Keep a rule’s id across versions by sending it; a rule without one gets a new id'),
    name: z.string().min(1).max(100).describe('For people'),
    expression: z.string().min(1).max(RULE_EXPRESSION_MAX).describe('A CEL expression over the event view, true when the rule matches'),
    action: RuleActionSchema,
    enabled: z.boolean().default(true).describe('A disabled rule is never evaluated (default true)'),
    mode: z.enum(RULE_MODES).default('live').describe('`live` acts, `test` only records matches (default live)'),
    response: BlockResponseSchema.optional(),
  })
  .strict()
  .refine((r) => r.response === undefined || r.action === 'block', { message: 'response is only for block rules', path: ['response'] })
  .openapi({ title: 'RuleInput', description: 'A rule as sent: `enabled` defaults to true, `mode` to live, a missing `id` is assigned.' });

export const RulesetSchema = z
  .object({
    version: z.number().int().nonnegative().describe('Increases with every change; 0: no ruleset saved yet (everything is allowed)'),
    rules: z.array(RuleSchema).describe('In order: the first enabled live rule that matches decides'),
    // The action when no live rule matches.
    defaultAction: RuleActionSchema,
    updatedAt: z.string().datetime().nullable().describe('When this version was saved (ISO 8601); null for version 0'),
    updatedBy: z.string().nullable().describe('Who saved it: a member’s email, or `secret key <prefix>`; null for version 0'),
  })
  .openapi({ title: 'Ruleset', description: 'A project’s rules, as of one version.' });

export const PutRulesetSchema = z
  .object({
    rules: z.array(RuleInputSchema).max(DECISION_LIMITS.rules).describe(`In order, at most ${DECISION_LIMITS.rules}`),
    defaultAction: z.enum(RULE_ACTIONS).default('allow').describe('The action when no live rule matches'),
    baseVersion: z
      .number()
      .int()
      .nonnegative()
      .optional()
      .describe('The version this change was made on: when another change came first, 409 `ruleset_conflict` instead of overwriting it'),
  })
  .strict()
  .superRefine((b, ctx) => {
    const seen = new Set<string>();
    b.rules.forEach((r, i) => {
      if (r.id === undefined) return;
      if (seen.has(r.id)) ctx.addIssue({ code: z.ZodIssueCode.custom, message: `duplicate rule id ${r.id}`, path: ['rules', i, 'id'] });
      seen.add(r.id);
    });
  })
  .openapi({ title: 'PutRulesetRequest', description: 'The whole ruleset, replacing the current one as a new version.' });

export const DecisionSchema = z
  .object({
    action: RuleActionSchema,
    ruleId: RuleIdSchema.optional().describe('The live rule that decided; absent when none matched (the default action)'),
    rulesetVersion: z.number().int().nonnegative().describe('The ruleset version that judged the event (0: none saved)'),
    // For block: what to answer.
    response: BlockResponseSchema.optional(),
    testMatches: z.array(RuleIdSchema).describe('Test-mode rules that matched (would have acted)'),
    erroredRules: z.array(RuleIdSchema).optional().describe('Rules whose evaluation failed on this event and were skipped; absent when none'),
  })
  .openapi({
    title: 'Decision',
    description:
      'What the project’s rules decided for the event; `allow` at `rulesetVersion` 0 when no ruleset was in force (also for events stored before rules existed).',
  });

export const LABELS = ['fraud', 'legitimate'] as const;

export const LabelSchema = z
  .object({
    verdict: z.enum(LABELS).describe('The analyst’s verdict'),
    note: z.string().max(DECISION_LIMITS.noteChars).describe('Empty when none'),
    labeledAt: z.string().datetime().describe('When (ISO 8601)'),
    labeledBy: z.string().describe('A member’s email, or `secret key <prefix>`'),
  })
  .openapi({ title: 'Label', description: 'An analyst’s verdict on an event.' });

export const LIST_KINDS = ['visitorId', 'linkedId', 'ip', 'asn', 'country'] as const;

export const ListNameSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, 'must be 1–64 letters, digits, _, . or -, starting with a letter or digit')
  .openapi({ example: 'blocked-ips' });

export const ListSchema = z
  .object({
    name: ListNameSchema.describe('Unique in the project; rules name it in `inList`'),
    kind: z
      .enum(LIST_KINDS)
      .describe('What the entries are: visitor ids, linkedIds, IP addresses and CIDR ranges (v4 and v6), ASNs (numbers), countries (ISO alpha-2)'),
    description: z.string().describe('What the list is for; empty when none'),
    entries: z.number().int().nonnegative().describe('Entries, expired ones included until removed'),
    createdAt: z.string().datetime().describe('When the list was created (ISO 8601)'),
    updatedAt: z.string().datetime().describe('When the list or its entries last changed (ISO 8601)'),
  })
  .openapi({ title: 'List', description: 'A named list rules test values against with `inList(name, value)`.' });

export const ListEntrySchema = z
  .object({
    value: z.string().describe('Canonical form: CIDR ranges as their network (10.0.0.0/8), ASNs as digits, countries upper case'),
    note: z.string().describe('Empty when none'),
    expiresAt: TimestampMs.nullable().describe('Unix ms after which the entry no longer matches; null: never'),
    addedAt: z.string().datetime().describe('When the value was added (ISO 8601)'),
  })
  .openapi({ title: 'ListEntry', description: 'One value of a list.' });

const EntryInputSchema = z
  .object({
    value: z
      .string()
      .min(1)
      .max(300)
      .describe('A value of the list’s kind: an IP or CIDR range, a visitorId, a linkedId, an ASN (13335 or AS13335), a country code'),
    note: z.string().max(DECISION_LIMITS.noteChars).optional().describe('Why it is on the list'),
    expiresAt: TimestampMs.optional().describe('Unix ms; the entry stops matching then'),
  })
  .strict()
  .openapi({ title: 'ListEntryInput', description: 'A value to add to a list (or to update: its note and expiry).' });

export const ListEntriesChangeSchema = z
  .object({
    add: z.array(EntryInputSchema).max(DECISION_LIMITS.entriesPerRequest).optional().describe('Added, or updated when present (note, expiry)'),
    remove: z.array(z.string().min(1).max(300)).max(DECISION_LIMITS.entriesPerRequest).optional().describe('Values to remove (absent ones are ignored)'),
  })
  .strict()
  .refine((b) => (b.add?.length ?? 0) + (b.remove?.length ?? 0) > 0, 'give values to add or remove')
  .openapi({ title: 'ListEntriesChange', description: `Bulk change: at most ${DECISION_LIMITS.entriesPerRequest} values to add and to remove.` });

export const PreviewRequestSchema = z
  .object({
    expression: z.string().min(1).max(RULE_EXPRESSION_MAX).describe('The draft: a CEL expression over the event view'),
    events: z.number().int().min(1).max(DECISION_LIMITS.previewEvents).default(DECISION_LIMITS.previewEvents).describe('How many of the newest events'),
    days: z.number().int().min(1).max(DECISION_LIMITS.previewDays).default(DECISION_LIMITS.previewDays).describe('How far back'),
  })
  .strict()
  .openapi({ title: 'PreviewRequest', description: 'A draft expression to try on the project’s recent events.' });

const PreviewSampleSchema = z
  .object({
    requestId: RequestIdSchema.describe('The event'),
    visitorId: VisitorIdSchema.describe('Its visitor, as identify returned it'),
    timestamp: TimestampMs.describe('When it occurred'),
    url: z.string().describe('Its page URL; empty when none'),
  })
  .openapi({ title: 'PreviewSample', description: 'An event a draft expression matched.' });

export const PreviewSchema = z
  .object({
    examined: z.number().int().nonnegative().describe('Events the expression was evaluated on'),
    matched: z.number().int().nonnegative().describe('Events on which the expression was true'),
    errored: z.number().int().nonnegative().describe('Events on which evaluation failed'),
    sample: z.array(PreviewSampleSchema).describe(`Up to ${DECISION_LIMITS.previewSample} matching events, newest first`),
    tookMs: z.number().nonnegative().describe('How long the preview took (it stops reading events after about 0.8 s and says how many it examined)'),
  })
  .openapi({ title: 'Preview', description: 'How a draft expression fares on recent events.' });

const RuleHitsSchema = z
  .object({
    ruleId: RuleIdSchema.describe('The rule'),
    hits24h: z.number().int().nonnegative().describe('Events it decided (live) or matched (test) in the last 24 hours'),
    hits7d: z.number().int().nonnegative().describe('The same over the last 7 days'),
    errors24h: z.number().int().nonnegative().describe('Events on which it failed to evaluate (and was skipped) in the last 24 hours'),
  })
  .openapi({ title: 'RuleHits', description: 'How often one rule acted.' });

export const RuleStatsSchema = z
  .object({
    rulesetVersion: z.number().int().nonnegative().describe('The version in force, whose rules are counted'),
    rules: z.array(RuleHitsSchema).describe('Each rule of that version, in order'),
  })
  .openapi({ title: 'RuleStats', description: 'Hits per rule of the current version over 24 hours and 7 days, whatever version judged the events.' });

export const ReviewItemSchema = z
  .object({
    requestId: RequestIdSchema.describe('The event'),
    visitorId: VisitorIdSchema.describe('Its visitor, as identify returned it'),
    linkedId: z.string().optional().describe('Its linkedId, when set'),
    ip: z.string().describe('Client IP'),
    country: z.string().describe('Country of the IP (ISO alpha-2); empty when unknown'),
    url: z.string().describe('Page URL; empty when none'),
    timestamp: TimestampMs.describe('When it occurred'),
    suspectScore: z.number().int().describe('0–100 composite risk'),
    ruleId: RuleIdSchema.optional().describe('The rule that sent it to review; absent when the default action did'),
    // Present once labeled.
    label: LabelSchema.optional(),
  })
  .openapi({ title: 'ReviewItem', description: 'An event a rule sent to review.' });

const ListAdditionSchema = z
  .object({
    list: ListNameSchema.describe('The list'),
    field: z.enum(['visitorId', 'linkedId', 'ip']).describe('Which of the event’s values to add: the list’s kind must be the same'),
  })
  .strict()
  .openapi({ title: 'ListAddition', description: 'A value of the labeled event to put on a list.' });

export const LabelRequestSchema = z
  .object({
    verdict: z.enum(LABELS).describe('fraud or legitimate'),
    note: z.string().max(DECISION_LIMITS.noteChars).optional().describe('Why, for the next analyst'),
    addTo: z
      .array(ListAdditionSchema)
      .max(3)
      .optional()
      .describe('Lists to add the event’s visitorId, linkedId or IP to, in the same step (the list’s kind must fit the field)'),
  })
  .strict()
  .openapi({ title: 'LabelRequest', description: 'An analyst’s verdict on an event, and lists to add it to.' });

/** The oldest event a protected request may claim. */
export const CLAIM_MAX_AGE_SECONDS = 86_400;

export const ClaimRequestSchema = z
  .object({
    maxAgeSeconds: z.number().int().min(1).max(CLAIM_MAX_AGE_SECONDS).default(300).describe('Refuse (410) an event older than this'),
  })
  .strict()
  .openapi({ title: 'ClaimRequest', description: 'Use a requestId for one protected request.' });

export const ClaimSchema = z
  .object({
    requestId: RequestIdSchema.describe('The requestId claimed'),
    visitorId: VisitorIdSchema.describe('The device as known now (a merged visitor’s survivor)'),
    timestamp: TimestampMs.describe('When the event occurred'),
    decision: DecisionSchema,
    confidence: z.number().describe('0–1, as identify returned it'),
    suspectScore: z.number().int().describe('0–100 composite risk'),
    botProbability: z.number().describe('0–1: how likely the event is automated'),
    linkedId: z.string().optional().describe('The event’s linkedId, when set'),
  })
  .openapi({ title: 'Claim', description: 'The decision for a protected request; the requestId cannot be used again.' });

const listNotFound = errorResponse('list_not_found', "Unknown list, or another project's");
const secret = { ...commonErrorResponses, 401: errorResponse('invalid_secret_key', 'Missing or invalid secret key') };
const invalidRules = errorResponse('invalid_rules', 'A rule does not compile: `details` gives each error with its rule, position and text', {
  error: 'rules[0].expression: found no matching overload for _>_ applied to (int, string) (line 1, column 14)',
});

/**
 * The routes of one area: under `base` with the secret key, or under the
 * dashboard's project path with a session and the given roles.
 */
function decisionRoutes<B extends string>(base: B, session: boolean) {
  const read = session ? { ...sessionRoutes, 404: errorResponse('project_not_found', "Unknown project, or another account's") } : secret;
  const write = session ? { ...read, ...csrfResponses } : secret;
  const named = { pathParams: z.object({ name: ListNameSchema.describe('The list’s name') }) };
  const event = { pathParams: z.object({ requestId: z.string().describe('req_<ulid> as returned by identify') }) };
  const m = (role: 'viewer' | 'analyst' | 'admin', csrf = false) =>
    session ? meta({ auth: 'session', role, ...(csrf && { csrf: true }) }) : meta({ auth: 'secretKey' });
  return {
    getRuleset: {
      method: 'GET',
      path: `${base}/ruleset`,
      summary: 'The current ruleset',
      responses: { 200: described(RulesetSchema, 'The ruleset in force'), ...read },
      metadata: m('viewer'),
    },
    putRuleset: {
      method: 'PUT',
      path: `${base}/ruleset`,
      summary: 'Replace the ruleset (a new version)',
      description:
        'Every expression is parsed and type-checked first: one that fails answers 400 `invalid_rules` with each error’s rule, line and column, and nothing changes. In force on the next identify in every process of the instance. Recorded in the audit log with before and after.',
      body: PutRulesetSchema,
      responses: {
        200: described(RulesetSchema, 'The new version, in force'),
        ...write,
        400: invalidRules,
        409: errorResponse('ruleset_conflict', '`baseVersion` is not the current version: read the ruleset again'),
      },
      metadata: m('admin', true),
    },
    getRulesetVersion: {
      method: 'GET',
      path: `${base}/ruleset/versions/:version`,
      summary: 'A past version of the ruleset (the one an event names in `decision.rulesetVersion`)',
      pathParams: z.object({ version: z.coerce.number().int().min(1).describe('A version the ruleset had (1, 2, …)') }),
      responses: { 200: described(RulesetSchema, 'That version'), ...read, 404: errorResponse('ruleset_version_not_found', 'No such version of the ruleset') },
      metadata: m('viewer'),
    },
    previewRule: {
      method: 'POST',
      path: `${base}/ruleset/preview`,
      summary: 'Try a draft expression on recent events',
      description: `Evaluates the expression on the project's newest events (at most ${DECISION_LIMITS.previewEvents}, at most ${DECISION_LIMITS.previewDays} days back) and counts the matches. Changes nothing.`,
      body: PreviewRequestSchema,
      responses: { 200: described(PreviewSchema, 'How the draft fares'), ...write, 400: invalidRules },
      metadata: m('analyst', true),
    },
    getRuleStats: {
      method: 'GET',
      path: `${base}/ruleset/stats`,
      summary: 'Hits per rule over 24 hours and 7 days',
      responses: { 200: described(RuleStatsSchema, 'Hits per rule'), ...read },
      metadata: m('viewer'),
    },
    listLists: {
      method: 'GET',
      path: `${base}/lists`,
      summary: 'The project’s lists',
      responses: {
        200: described(
          z.object({ lists: z.array(ListSchema).describe('By name') }).openapi({ title: 'Lists', description: 'The project’s lists, by name' }),
          'The project’s lists',
        ),
        ...read,
      },
      metadata: m('viewer'),
    },
    createList: {
      method: 'POST',
      path: `${base}/lists`,
      summary: 'Create a list',
      body: z
        .object({
          name: ListNameSchema.describe('Unique in the project; rules name it in `inList`'),
          kind: z.enum(LIST_KINDS).describe('What the entries are'),
          description: z.string().max(DECISION_LIMITS.noteChars).default('').describe('What the list is for'),
        })
        .strict()
        .openapi({ title: 'CreateListRequest', description: 'A new, empty list' }),
      responses: {
        201: described(ListSchema, 'The new list'),
        ...write,
        409: errorResponse('list_exists', `A list of that name exists, or the project has ${DECISION_LIMITS.lists} lists`, {
          error: 'A list named blocked-ips already exists',
        }),
      },
      metadata: m('admin', true),
    },
    getList: {
      ...named,
      method: 'GET',
      path: `${base}/lists/:name`,
      summary: 'One list',
      responses: { 200: described(ListSchema, 'The list'), ...read, 404: listNotFound },
      metadata: m('viewer'),
    },
    updateList: {
      ...named,
      method: 'PATCH',
      path: `${base}/lists/:name`,
      summary: 'Change a list’s description',
      body: z
        .object({ description: z.string().max(DECISION_LIMITS.noteChars).describe('What the list is for') })
        .strict()
        .openapi({ title: 'UpdateListRequest', description: 'A list’s new description' }),
      responses: { 200: described(ListSchema, 'The list, changed'), ...write, 404: listNotFound },
      metadata: m('admin', true),
    },
    deleteList: {
      ...named,
      method: 'DELETE',
      path: `${base}/lists/:name`,
      summary: 'Delete a list and its entries (rules naming it stop matching it)',
      body: c.noBody(),
      responses: { 200: described(ListSchema, 'The list as it was, now deleted'), ...write, 404: listNotFound },
      metadata: m('admin', true),
    },
    listEntries: {
      ...named,
      method: 'GET',
      path: `${base}/lists/:name/entries`,
      summary: 'A list’s entries, by value',
      query: z
        .object({
          prefix: z.string().max(300).optional().describe('Only values starting with this'),
          cursor: z.string().max(400).optional().describe('The `cursor` of the previous page'),
          limit: queryInteger(1, 1000).default(100).describe('Entries per page, 1–1000'),
        })
        .strict(),
      responses: {
        200: described(
          z
            .object({
              entries: z.array(ListEntrySchema).describe('Entries in value order'),
              cursor: z.string().optional().describe('Present when there may be more: pass it as `cursor` for the next page'),
            })
            .openapi({ title: 'ListEntries', description: 'One page of a list’s entries' }),
          'One page of entries',
        ),
        ...read,
        404: listNotFound,
      },
      metadata: m('viewer'),
    },
    changeListEntries: {
      ...named,
      method: 'POST',
      path: `${base}/lists/:name/entries`,
      summary: 'Add, update and remove entries in bulk',
      description: `Values are checked against the list's kind first: a bad one answers 400 \`invalid_list_entries\` with each bad value by index, and nothing changes. A list holds at most ${DECISION_LIMITS.listEntries} entries (409 \`list_full\`). In force on the next identify.`,
      body: ListEntriesChangeSchema,
      responses: {
        200: described(
          z
            .object({
              added: z.number().int().describe('Values that were not on the list'),
              updated: z.number().int().describe('Values whose note or expiry changed'),
              removed: z.number().int().describe('Values taken off'),
              entries: z.number().int().describe('What the list holds now'),
            })
            .openapi({ title: 'ListEntriesChanged', description: 'What changed, and the entries the list now holds' }),
          'What changed',
        ),
        ...write,
        400: errorResponse('invalid_list_entries', 'Values that do not fit the list’s kind, each in `details`', {
          error: 'add[3].value: not an IP address or CIDR range',
        }),
        404: listNotFound,
        409: errorResponse('list_full', `The list would hold more than ${DECISION_LIMITS.listEntries} entries`),
      },
      metadata: m('admin', true),
    },
    listReviews: {
      method: 'GET',
      path: `${base}/reviews`,
      summary: 'The review queue: events a rule sent to review, newest first',
      query: z
        .object({
          status: z.enum(['pending', 'labeled', 'all']).default('pending').describe('`pending`: waiting for a label (default); `labeled`; `all`'),
          limit: queryInteger(1, 100).default(20).describe('Items per page, 1–100'),
          paginationKey: z.string().max(200).optional().describe('The `paginationKey` of the previous page'),
        })
        .strict(),
      responses: {
        200: described(
          z
            .object({
              items: z.array(ReviewItemSchema).describe('Newest first'),
              paginationKey: z.string().optional().describe('Present when there may be more: pass it back for the next page'),
            })
            .openapi({ title: 'ReviewQueue', description: 'One page of the review queue' }),
          'One page of the queue',
        ),
        ...read,
      },
      metadata: m('viewer'),
    },
    labelEvent: {
      ...event,
      method: 'POST',
      path: `${base}/events/:requestId/label`,
      summary: 'Label an event fraud or legitimate',
      description:
        'Stores the label on the event (searchable, sent to webhooks as an update), adds its visitorId, linkedId or IP to the lists named in `addTo`, and records it in the audit log. A second label replaces the first.',
      body: LabelRequestSchema,
      responses: {
        200: described(LabelSchema, 'The label, stored'),
        ...write,
        404: errorResponse('event_not_found', "'Event not found': unknown id, another project's event, or a list of `addTo` that does not exist"),
        409: errorResponse('list_kind_mismatch', 'A list of `addTo` holds another kind of value, or the event has no linkedId', {
          error: 'List blocked-ips holds ip values, not visitorId',
        }),
      },
      metadata: m('analyst', true),
    },
    exportLabels: {
      method: 'GET',
      path: `${base}/labels`,
      summary: 'Every label of the project, as JSON lines (one event per line)',
      query: z
        .object({
          since: queryInteger(0, 2 ** 48)
            .optional()
            .describe('Only labels made at or after this Unix ms time'),
        })
        .strict(),
      responses: {
        200: describedOther(
          c.otherResponse({
            contentType: 'application/x-ndjson',
            body: z.string().describe('One JSON object per line: requestId, visitorId, label, decision, and the event’s scores'),
          }),
          'The labels, one JSON object per line',
        ),
        ...read,
      },
      metadata: m('analyst'),
    },
  } as const;
}

const ids = z.object({ projectId: z.string() });

export const decisionsContract = c.router(decisionRoutes('/v1', false), { strictStatusCodes: true });
export const dashboardDecisionsContract = c.router(decisionRoutes('/api/projects/:projectId', true), {
  strictStatusCodes: true,
  pathParams: ids,
});

export const enforcementContract = c.router(
  {
    claimEvent: {
      method: 'POST',
      path: '/v1/events/:requestId/claim',
      summary: 'Use a requestId for one protected request: its decision, once',
      description:
        'What `protect()` of @deviceid/client calls for each protected request: the page sends the requestId identify gave it, your server claims it. The first claim answers the decision; a second answers 409 (a replayed requestId), an event older than `maxAgeSeconds` 410. Secret key of the event’s project.',
      pathParams: z.object({ requestId: z.string().describe('req_<ulid> as identify returned it to the page') }),
      body: ClaimRequestSchema,
      responses: {
        200: described(ClaimSchema, 'The decision; the requestId is now used'),
        ...secret,
        404: errorResponse('event_not_found', "'Event not found': unknown id, or another project's event"),
        409: errorResponse('request_id_used', 'This requestId was already used for a protected request'),
        410: errorResponse('request_id_expired', 'This requestId is older than `maxAgeSeconds`'),
      },
      metadata: meta({ auth: 'secretKey' }),
    },
  },
  { strictStatusCodes: true },
);
