// The dashboard's events explorer and visitor timeline (session cookie): a
// project's newest identifications through event search, and a visitor's
// visits through the visit history, as summaries for tables. A row's full
// event is GET /api/events/:requestId (contract/demo.ts); deleting a
// visitor's data is the session's form of DELETE /v1/visitors/:visitorId,
// and a visitor's related visitors in a project the session's form of
// GET /v1/visitors/:visitorId/related.
import { z } from 'zod';
import { csrfResponses, sessionRoutes } from './account.js';
import { described, errorResponse, initContract, meta, queryInteger, RequestIdSchema, TimestampMs, UNIX_MS_MAX, VisitorIdSchema } from './common.js';
import { EventSearchQuerySchema } from './events.js';
import { BOT_CATEGORIES } from './bots.js';
import { SUSPECT_SCORE_COUNTED } from './suspects.js';
import { BotInfoSchema, RiskFactorSchema } from './risk.js';
import { DeletionSchema, RELATED_PAGE_MAX, RELATED_PAGE_SIZE, RELATED_THRESHOLD, RelatedVisitorsSchema } from './visitors.js';
import { VISITS_PAGE_SIZE } from './visits.js';

const c = initContract();

/** Events per explorer page by default; at most 100, as the public search (SEARCH_MAX). */
export const EXPLORER_PAGE_SIZE = 20;
export const EXPLORER_PAGE_MAX = 100;

export const BOT_KINDS = ['good', 'bad', 'none'] as const;

/** Every filter of GET /v1/events, with the same meaning; pages of 20 by default. */
export const ExplorerQuerySchema = EventSearchQuerySchema.extend({
  limit: queryInteger(1, EXPLORER_PAGE_MAX).default(EXPLORER_PAGE_SIZE).describe(`Events per page, 1–${EXPLORER_PAGE_MAX}`),
}).strict();

export const EventSummarySchema = z
  .object({
    requestId: RequestIdSchema.describe('The event'),
    visitorId: VisitorIdSchema.describe('The device as known now (the survivor when the visitor has since been merged)'),
    timestamp: TimestampMs,
    ip: z.string().describe('The client IP address'),
    country: z.string().describe('Country code of the IP location; empty when unknown'),
    city: z.string().describe('City of the IP location; empty when unknown'),
    browser: z.string().describe('Browser and system read from the User-Agent, e.g. "Chrome 130 on Windows"'),
    bot: z.enum(BOT_KINDS).describe('`good`: a bot proven to be who it says (verified or signed); `bad`: any other automation, spoofed names included; `none`'),
    botInfo: BotInfoSchema.optional(),
    botProbability: z.number().min(0).max(1).describe('How likely the visit came from a bot, 0 to 1'),
    suspect: z.boolean().describe('Manually flagged as suspect'),
    suspectScore: z.number().int().min(0).max(100).describe('Risk score, 0 to 100: the weighted sum of the verdicts that fired'),
    confidence: z.number().min(0).max(1).describe('How sure the service is that visitorId is this device, 0 to 1'),
    linkedId: z.string().optional().describe('Present only if set'),
    url: z.string().describe('The page the agent ran on'),
  })
  .openapi({ title: 'EventSummary', description: 'An event as the explorer lists it' });

export const VisitSummarySchema = z
  .object({
    id: z.string().uuid().describe('The visit'),
    timestamp: TimestampMs,
    country: z.string().describe('Country code of the IP location; empty when unknown'),
    city: z.string().describe('City of the IP location; empty when unknown'),
    region: z.string().describe('Region (state, province) of the IP location; empty when unknown'),
    network: z.string().describe('The organisation of the IP address (its AS); empty when unknown'),
    browser: z.string().describe('Browser and system read from the User-Agent'),
    confidence: z.number().min(0).max(1).describe('How sure the service was that this visit was this device, 0 to 1'),
    botProbability: z.number().min(0).max(1).describe('How likely the visit came from a bot, 0 to 1'),
    riskFactors: z.array(RiskFactorSchema).describe('The verdicts that fired on this visit, with their weights'),
    originalVisitorId: VisitorIdSchema.optional().describe('Present only for a visit identified as a visitor since merged into this one'),
  })
  .openapi({ title: 'VisitSummary', description: 'One visit in a visitor’s timeline' });

export const VisitorTimelineSchema = z
  .object({
    visitorId: VisitorIdSchema.describe('The visitor asked for, or the one it has been merged into'),
    mergedFrom: z.array(VisitorIdSchema).describe('Visitors merged into this one; their visits are part of the timeline'),
    totalVisits: z.number().int().nonnegative().describe('Visits of this visitor and of those merged into it'),
    firstSeenAt: TimestampMs,
    visits: z.array(VisitSummarySchema).max(VISITS_PAGE_SIZE).describe('At most 20 visits, newest first, in every project of the account'),
    nextBefore: z.string().optional().describe('Present when the page is full: the `before` of the next, older page'),
  })
  .openapi({ title: 'VisitorTimeline', description: 'A visitor (the whole device, merges included) and a page of its visits' });

/** The hourly counts' window: 24 hours by default, at most 48; counts are kept for the last 48 hours (the longest window). */
export const HOURLY_DEFAULT_HOURS = 24;
export const HOURLY_MAX_HOURS = 48;

const count = (what: string) => z.number().int().nonnegative().describe(what);

export const HourCountsSchema = z
  .object({
    start: TimestampMs.describe('The hour’s start (UTC), Unix ms'),
    identifications: count('Identifications served in the hour'),
    bots: count('Of them, those judged a bot, good or bad'),
    suspects: count(`Of them, suspects: flagged, or a suspect score of ${SUSPECT_SCORE_COUNTED} or more, when identified`),
  })
  .openapi({ title: 'HourCounts', description: 'One hour of a project’s identifications' });

export const BotCategoryCountsSchema = z
  .object({
    category: z.enum(BOT_CATEGORIES).describe('What kind of automation (`verdicts.bot.info.category`)'),
    good: count('Bots of the category proven to be who they say (verified or signed)'),
    bad: count('Any other bots of the category'),
  })
  .openapi({ title: 'BotCategoryCounts', description: 'Bots of one category in the window' });

export const ProjectHourlySchema = z
  .object({
    hours: z.array(HourCountsSchema).max(HOURLY_MAX_HOURS).describe('Every hour of the window, oldest first; an hour without identifications holds zeros'),
    botCategories: z.array(BotCategoryCountsSchema).describe('The window’s bots by category, most first; categories without bots are left out'),
    keptSince: TimestampMs.describe(
      `The start of the oldest hour still kept (${HOURLY_MAX_HOURS - 1} hours before the current one): the window's hours before it read as zeros`,
    ),
  })
  .openapi({
    title: 'ProjectHourly',
    description:
      'A project’s identifications per hour as they were served: exact, from counters every process keeps (deleting a visitor later does not take its identifications off)',
  });

export const explorerContract = c.router(
  {
    listProjectEvents: {
      method: 'GET',
      path: '/api/projects/:projectId/events',
      summary: "A project's events, newest first, filtered as GET /v1/events filters them (dashboard explorer)",
      description:
        'Summaries of the events identified with the keys of one of your projects. A page holds at most `limit` events and may hold fewer, even none, and still carry a `paginationKey`: each request examines a bounded number of index entries (see GET /v1/events).',
      pathParams: z.object({ projectId: z.string().max(64) }),
      query: ExplorerQuerySchema,
      responses: {
        200: z
          .object({
            events: z.array(EventSummarySchema).describe('The matching events, newest first (oldest first with reverse=true)'),
            paginationKey: z.string().optional().describe('Present when there may be more events: the `paginationKey` of the next page'),
          })
          .openapi({ title: 'ExplorerPage', description: 'A page of the explorer’s event search' }),
        ...sessionRoutes,
        400: errorResponse(
          'validation_failed',
          'A filter that fails validation or an unknown parameter (`error` names it), or a paginationKey this endpoint did not return',
          { error: 'paginationKey: not a key this endpoint returned' },
        ),
        404: errorResponse('project_not_found', "'Project not found': unknown project, or another account's"),
      },
      metadata: meta({ auth: 'session', role: 'viewer' }),
    },
    getProjectHourly: {
      method: 'GET',
      path: '/api/projects/:projectId/hourly',
      summary: "A project's identifications, bots and suspects per hour (dashboard overview)",
      description: `Counts of the identifications served with the keys of one of your projects, hour by hour (UTC): by default the ${HOURLY_DEFAULT_HOURS} hours ending with the current one. Counted as identify answers, so exact whatever the number of events; kept for the last ${HOURLY_MAX_HOURS} hours.`,
      pathParams: z.object({ projectId: z.string().max(64) }),
      query: z
        .object({
          end: queryInteger(0, UNIX_MS_MAX).optional().describe('Unix ms: the window ends with the hour holding it (default: now)'),
          hours: queryInteger(1, HOURLY_MAX_HOURS)
            .optional()
            .describe(`How many hours the window holds, 1–${HOURLY_MAX_HOURS} (default ${HOURLY_DEFAULT_HOURS})`),
        })
        .strict(),
      responses: {
        200: ProjectHourlySchema,
        ...sessionRoutes,
        400: errorResponse('validation_failed', 'An unknown parameter, or a value out of its bounds (`error` names it)', {
          error: `hours: Number must be less than or equal to ${HOURLY_MAX_HOURS}`,
        }),
        404: errorResponse('project_not_found', "'Project not found': unknown project, or another account's"),
      },
      metadata: meta({ auth: 'session', role: 'viewer' }),
    },
    getVisitorTimeline: {
      method: 'GET',
      path: '/api/visitors/:visitorId',
      summary: "A visitor's visits, newest first (dashboard timeline)",
      description:
        "The visit history of one of your account's visitors (every project), 20 visits a page. A merged visitor answers with the survivor's timeline, which includes the merged visitors' visits.",
      pathParams: z.object({ visitorId: z.string().max(64) }),
      query: z
        .object({
          before: z.string().max(64).optional().describe('`nextBefore` of the previous page: a visit id (the visits before it), or a Unix ms time'),
        })
        .strict(),
      responses: {
        200: VisitorTimelineSchema,
        ...sessionRoutes,
        400: errorResponse('invalid_cursor', 'Malformed cursor, or an unknown parameter', {
          error: 'before: must be a visit id of this visitor or a Unix ms timestamp',
        }),
        404: errorResponse('visitor_not_found', "'Visitor not found': unknown id or another account's visitor"),
      },
      metadata: meta({ auth: 'session', role: 'analyst' }),
    },
    getProjectRelatedVisitors: {
      method: 'GET',
      path: '/api/projects/:projectId/visitors/:visitorId/related',
      summary: "A visitor's related visitors in a project (dashboard visitor page)",
      description: `What GET /v1/visitors/:visitorId/related answers, with the session instead of a secret key and the project in the path: the other visitors of one of your projects judged to be the same physical machine in another browser or browser profile, each with its probability (only ${RELATED_THRESHOLD} and above), the evidence that weighed most and when the two were last seen on the same network; the most recently seen together first, paged by \`paginationKey\`. A visitor of the account never seen in the project has none.`,
      pathParams: z.object({
        projectId: z.string().max(64).describe('One of your projects: related visitors are judged among its visitors only'),
        visitorId: z.string().max(64).describe('iq_<ulid> (a merged id answers for its survivor)'),
      }),
      query: z
        .object({
          limit: queryInteger(1, RELATED_PAGE_MAX).optional().describe(`Related visitors per page, 1–${RELATED_PAGE_MAX} (default ${RELATED_PAGE_SIZE})`),
          paginationKey: z.string().max(64).optional().describe('The `paginationKey` of the previous page, for the next one'),
        })
        .strict(),
      responses: {
        200: described(RelatedVisitorsSchema, 'A page of related visitors (an empty list when none passes the threshold)'),
        ...sessionRoutes,
        400: errorResponse(
          'validation_failed',
          'A `limit` out of its bounds, a `paginationKey` this endpoint did not give, or an unknown parameter (`error` names it)',
          { error: 'paginationKey: not one this endpoint gave' },
        ),
        404: errorResponse(
          'visitor_not_found',
          "'Visitor not found': unknown id or another account's visitor; or 'Project not found' (`project_not_found`): unknown project, or another account's",
        ),
      },
      metadata: meta({ auth: 'session', role: 'analyst' }),
    },
    deleteAccountVisitor: {
      method: 'DELETE',
      path: '/api/visitors/:visitorId',
      summary: "Delete a visitor's data (dashboard)",
      description:
        'What DELETE /v1/visitors/:visitorId does, with the session instead of a secret key: the device and everything stored about it, in the background. Idempotent.',
      pathParams: z.object({ visitorId: VisitorIdSchema.describe('Any id of the device (a merged one deletes the whole device)') }),
      body: c.noBody(),
      responses: {
        202: described(DeletionSchema, 'The deletion is queued (or running, or done): repeat the request to follow it'),
        ...sessionRoutes,
        ...csrfResponses,
        404: errorResponse('visitor_not_found', "'Visitor not found': unknown id or another account's visitor"),
      },
      metadata: meta({ auth: 'session', csrf: true, role: 'admin' }),
    },
  },
  { strictStatusCodes: true },
);
