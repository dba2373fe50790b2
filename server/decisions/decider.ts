// The decision of every identify: the project's ruleset, compiled once per
// version and kept per process, evaluated on the event's view with the
// project's lists. The version in force comes from the project document
// identify has already read; a change drops this process's copies before it
// is answered (server/projects/changes.ts), so an unchanged ruleset costs no
// database command and a changed one one read.
import { LRUCache } from 'lru-cache';
import type { Metrics } from '../metrics/registry.js';
import type { ProjectDoc } from '../store/projects.js';
import { NO_DECISION, type EventDoc, type StoredDecision } from '../store/events.js';
import type { Store } from '../store/index.js';
import type { RulesetDoc } from '../store/rulesets.js';
import { CompiledRuleset } from './engine.js';
import type { ProjectLists } from './listCache.js';
import { viewInputOf, type EventSignals } from './storedView.js';
import { decisionView } from './view.js';

interface Held {
  version: number;
  doc: RulesetDoc;
  compiled: CompiledRuleset;
}

export class Decider {
  private readonly held = new LRUCache<string, Held>({ max: 2_000 });

  constructor(
    private readonly store: Store,
    private readonly lists: ProjectLists,
    private readonly metrics?: Metrics,
  ) {}

  /** Drops this process's copy of the project's ruleset and lists. */
  forget(projectId: string): void {
    this.held.delete(projectId);
    this.lists.forget(projectId);
  }

  /** The compiled ruleset in force for the project; null while it has none. */
  async ruleset(project: ProjectDoc): Promise<Held | null> {
    const version = project.rulesetVersion ?? 0;
    if (version === 0) return null;
    const held = this.held.get(project._id);
    if (held?.version === version) return held;
    const doc = await this.store.rulesets.get(project._id, version);
    if (!doc) return null;
    const fresh = { version, doc, compiled: new CompiledRuleset(doc.rules) };
    this.held.set(project._id, fresh);
    return fresh;
  }

  /**
   * The decision for an event of the project. Never throws for an
   * expression: a failing rule is skipped and named in `erroredRules`
   * (counted per rule by the rule stats, from the search index).
   */
  async decide(project: ProjectDoc | null, event: EventDoc, signals?: EventSignals): Promise<StoredDecision> {
    if (!project) return NO_DECISION;
    const held = await this.ruleset(project);
    if (!held) return NO_DECISION;
    const lists = await this.lists.lookup(project._id, project.listsVersion ?? 0);
    const d = held.compiled.decide(decisionView(viewInputOf(event, signals)), lists);
    const rule = d.ruleId === null ? undefined : held.doc.rules.find((r) => r.id === d.ruleId);
    const action = d.action ?? held.doc.defaultAction;
    if (this.metrics) {
      this.metrics.ruleDecisions.inc({ action });
      if (d.ruleId !== null) this.metrics.ruleHits.inc();
      if (d.errored.length) this.metrics.ruleErrors.inc(d.errored.length);
    }
    return {
      action,
      ...(d.ruleId !== null && { ruleId: d.ruleId }),
      rulesetVersion: held.version,
      ...(rule?.action === 'block' && { response: rule.response ?? DEFAULT_BLOCK }),
      testMatches: d.testMatches,
      ...(d.errored.length && { erroredRules: d.errored }),
    };
  }
}

/** A block rule without a response of its own answers this. */
export const DEFAULT_BLOCK = {
  status: 403,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ error: 'Request blocked' }),
};
