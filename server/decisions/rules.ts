// A project's ruleset: read, replaced as a new version (every expression
// checked first), its past versions, hits per rule, and a draft
// expression's preview on recent events.
import { performance } from 'node:perf_hooks';
import { encodeTime, ulid } from 'ulid';
import type { z } from 'zod';
import type { PreviewRequestSchema, PreviewSchema, PutRulesetSchema, RulesetSchema, RuleStatsSchema } from '../../contract/decisions.js';
import { DECISION_LIMITS } from '../../contract/decisions.js';
import type { AuditLog } from '../audit/log.js';
import type { Clock } from '../clock.js';
import { ApiError } from '../errors.js';
import type { ProjectChanges } from '../projects/changes.js';
import type { EventDoc } from '../store/events.js';
import type { Store } from '../store/index.js';
import type { ProjectDoc } from '../store/projects.js';
import type { RulesetDoc, StoredRule } from '../store/rulesets.js';
import { checkExpression, CompiledRuleset, type RuleError } from './engine.js';
import type { ProjectLists } from './listCache.js';
import { viewInputOf } from './storedView.js';
import { decisionView } from './view.js';

type Ruleset = z.infer<typeof RulesetSchema>;
type PutRuleset = z.output<typeof PutRulesetSchema>;
type PreviewRequest = z.output<typeof PreviewRequestSchema>;
type Preview = z.infer<typeof PreviewSchema>;
type RuleStats = z.infer<typeof RuleStatsSchema>;

const DAY_MS = 24 * 3600_000;
/** A preview answers within about a second: it stops reading events after this long and says how many it examined. */
export const PREVIEW_BUDGET_MS = 800;
/** Entries a preview reads first, and at most at once (FerretDB narrows an `_id` `$in` of up to 1,000 in SQL: docs/database.md). */
const PREVIEW_FIRST_BATCH = 100;
const PREVIEW_BATCH_MAX = 1_000;

export const describeError = (path: string, e: RuleError) => ({ path, message: e.message, line: e.line, column: e.column, offset: e.offset });

/** 400 `invalid_rules` with every error; the text names the first. */
export function invalidRules(details: ReturnType<typeof describeError>[]): ApiError {
  const first = details[0]!;
  const more = details.length > 1 ? ` (and ${details.length - 1} more)` : '';
  return new ApiError('invalid_rules', `${first.path}: ${first.message} (line ${first.line}, column ${first.column})${more}`, { details });
}

export class RulesService {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly audit: AuditLog,
    private readonly changes: ProjectChanges,
    private readonly lists: ProjectLists,
  ) {}

  async get(accountId: string, projectId: string): Promise<Ruleset> {
    const project = await this.project(accountId, projectId);
    const version = project.rulesetVersion ?? 0;
    return rulesetOf(version === 0 ? null : await this.store.rulesets.get(projectId, version));
  }

  async version(accountId: string, projectId: string, version: number): Promise<Ruleset> {
    await this.project(accountId, projectId);
    const doc = await this.store.rulesets.get(projectId, version);
    if (!doc) throw new ApiError('ruleset_version_not_found');
    return rulesetOf(doc);
  }

  async put(accountId: string, projectId: string, body: PutRuleset): Promise<Ruleset> {
    const project = await this.project(accountId, projectId);
    const details = body.rules.flatMap((r, i) => {
      const e = checkExpression(r.expression);
      return e ? [describeError(`rules[${i}].expression`, e)] : [];
    });
    if (details.length) throw invalidRules(details);
    const current = project.rulesetVersion ?? 0;
    if (body.baseVersion !== undefined && body.baseVersion !== current) throw new ApiError('ruleset_conflict');
    // A version saved by a change that failed before it was put in force is skipped, never overwritten.
    const next = Math.max(current, (await this.store.rulesets.latest(projectId))?.version ?? 0) + 1;
    const rules: StoredRule[] = body.rules.map((r) => ({
      id: r.id ?? `rul_${ulid(this.clock.now())}`,
      name: r.name,
      expression: r.expression,
      action: r.action,
      enabled: r.enabled,
      mode: r.mode,
      ...(r.response && { response: r.response }),
    }));
    const doc: Omit<RulesetDoc, '_id'> = {
      accountId,
      projectId,
      version: next,
      rules,
      defaultAction: body.defaultAction,
      createdAt: new Date(this.clock.now()),
      createdBy: await this.audit.actorLabel(),
    };
    if (!(await this.store.rulesets.insert(doc))) throw new ApiError('ruleset_conflict');
    const before = current === 0 ? null : await this.store.rulesets.get(projectId, current);
    // Saved, the version is put in force by the swap: that write is the change.
    const swapped = await this.audit.change(
      accountId,
      'ruleset.update',
      {
        target: { type: 'project', id: projectId },
        before: before && { version: before.version, defaultAction: before.defaultAction, rules: before.rules },
        after: { version: next, defaultAction: doc.defaultAction, rules },
      },
      (stamp) => this.store.projects.swapRulesetVersion(projectId, current, next, stamp),
    );
    if (!swapped) throw new ApiError('ruleset_conflict');
    await this.changes.announce(projectId);
    return rulesetOf({ _id: '', ...doc });
  }

  /** Hits per rule of the version in force: counted on the search index's rule ranges. */
  async stats(accountId: string, projectId: string): Promise<RuleStats> {
    const project = await this.project(accountId, projectId);
    const version = project.rulesetVersion ?? 0;
    const doc = version === 0 ? null : await this.store.rulesets.get(projectId, version);
    const now = this.clock.now();
    const since = (ms: number) => encodeTime(Math.max(0, now - ms), 10);
    const count = (kind: string, id: string, ms: number) => this.store.eventIndex.count(`${accountId}|${kind}|${projectId}|${id}`, since(ms), '~');
    const rules = await Promise.all(
      (doc?.rules ?? []).map(async (r) => {
        const kind = r.mode === 'live' ? 'r' : 'q';
        const [hits24h, hits7d, errors24h] = await Promise.all([count(kind, r.id, DAY_MS), count(kind, r.id, 7 * DAY_MS), count('x', r.id, DAY_MS)]);
        return { ruleId: r.id, hits24h, hits7d, errors24h };
      }),
    );
    return { rulesetVersion: version, rules };
  }

  /**
   * A draft expression on the project's newest events, newest first, within
   * PREVIEW_BUDGET_MS. Reading is nearly all of it (FerretDB reads a few
   * thousand documents a second), so batches start small and grow to what
   * the rest of the budget allows at the rate measured so far.
   */
  async preview(accountId: string, projectId: string, body: PreviewRequest): Promise<Preview> {
    const project = await this.project(accountId, projectId);
    const error = checkExpression(body.expression);
    if (error) throw invalidRules([describeError('expression', error)]);
    const started = performance.now();
    const elapsed = () => performance.now() - started;
    const ruleset = new CompiledRuleset([{ id: 'preview', expression: body.expression, action: 'review', enabled: true, mode: 'live' }]);
    const lists = await this.lists.lookup(projectId, project.listsVersion ?? 0);
    const lo = encodeTime(Math.max(0, this.clock.now() - body.days * DAY_MS), 10);
    const out: Preview = { examined: 0, matched: 0, errored: 0, sample: [], tookMs: 0 };
    let hi = '~';
    let size = PREVIEW_FIRST_BATCH;
    let read = 0;
    while (size >= PREVIEW_FIRST_BATCH && out.examined < body.events) {
      // The account's entries newest first; those of other projects are skipped.
      const entries = await this.store.eventIndex.range(`${accountId}|a`, lo, hi, 'desc', size);
      const ids = entries.filter((e) => e.p === undefined || e.p === projectId).map((e) => e.r);
      const events = (await this.store.events.getMany(ids)).filter((e) => e.projectId === projectId).sort((a, b) => (a._id < b._id ? 1 : -1));
      for (const e of events) {
        if (out.examined === body.events) break;
        out.examined++;
        const d = ruleset.decide(decisionView(viewInputOf(e)), lists);
        if (d.errored.length) out.errored++;
        else if (d.ruleId !== null) {
          out.matched++;
          if (out.sample.length < DECISION_LIMITS.previewSample) out.sample.push(sampleOf(e));
        }
      }
      if (entries.length < size) break;
      hi = entries[entries.length - 1]!._id.slice(-26);
      read += entries.length;
      // As many as the rest of the budget has room for at the rate so far.
      size = Math.min(PREVIEW_BATCH_MAX, Math.floor(((PREVIEW_BUDGET_MS - elapsed()) * read) / elapsed()));
    }
    out.tookMs = Math.round(elapsed());
    return out;
  }

  private async project(accountId: string, projectId: string): Promise<ProjectDoc> {
    const project = await this.store.projects.ofAccount(accountId, projectId);
    if (!project) throw new ApiError('project_not_found');
    return project;
  }
}

const sampleOf = (e: EventDoc) => ({ requestId: e._id, visitorId: e.visitorId, timestamp: e.timestamp, url: e.url });

function rulesetOf(doc: RulesetDoc | null): Ruleset {
  if (!doc) return { version: 0, rules: [], defaultAction: 'allow', updatedAt: null, updatedBy: null };
  return {
    version: doc.version,
    rules: doc.rules.map((r) => ({ ...r })),
    defaultAction: doc.defaultAction,
    updatedAt: doc.createdAt.toISOString(),
    updatedBy: doc.createdBy,
  };
}
