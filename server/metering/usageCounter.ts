// Usage per day, and a project's identifications per hour, without a
// database write per call: this process counts the calls it admitted, and
// the identifications it served, in memory and adds them to its own usage
// slot and hourly documents (server/store/usage.ts), in one command, at most
// once a FLUSH_MS, before it reads them, and on close. Only this process
// writes those documents, so the counts are exact on MongoDB and FerretDB
// whatever the number of processes; a process that dies loses at most
// FLUSH_MS of counting.
import { SUSPECT_SCORE_COUNTED } from '../../contract/suspects.js';
import { ulid } from '../ids.js';
import type { Clock } from '../clock.js';
import { botKindOf } from '../store/eventIndex.js';
import type { EventDoc } from '../store/events.js';
import { KeyedLock } from '../store/keyedLock.js';
import { utcDay, type HourDoc, type HourIncrements, type MonthUsage, type UsageRepo } from '../store/usage.js';
import { dayOf, periodOf } from './period.js';

/** How long admitted calls may wait in memory before they are written. */
export const FLUSH_MS = 1_000;

/** What the hourly counts take of an identification served. */
export interface Served {
  accountId: string;
  projectId: string;
  timestamp: number;
  bot: 'good' | 'bad' | 'none';
  /** The bot's category, when it has one. */
  category?: string | undefined;
  suspect: boolean;
}

/** The event identify stored, as the hourly counts see it: a suspect as the overview defines one, judged when identified. */
export function servedOf(e: EventDoc): Served {
  const bot = e.verdicts.bot as { info?: { category?: unknown } } | undefined;
  const category = bot?.info?.category;
  return {
    accountId: e.accountId,
    projectId: e.projectId,
    timestamp: e.timestamp,
    bot: botKindOf(e.verdicts.bot as Parameters<typeof botKindOf>[0]),
    ...(typeof category === 'string' && { category }),
    suspect: e.suspect || e.suspectScore >= SUSPECT_SCORE_COUNTED,
  };
}

interface Pending {
  accountId: string;
  period: string;
  /** Calls not yet written, per day: with live keys and with test keys. */
  live: Record<string, number>;
  test: Record<string, number>;
  /** Identifications not yet written, per `<projectId>|<YYYY-MM-DD>`: what to add to the hour fields. */
  hours: Map<string, HourIncrements>;
  slot: string | null;
}

const add = (into: Record<string, number>, from: Record<string, number>) => {
  for (const [day, n] of Object.entries(from)) into[day] = (into[day] ?? 0) + n;
};
const nonZero = (d: Record<string, number>) => Object.fromEntries(Object.entries(d).filter(([, n]) => n !== 0));
/** A category becomes a field name: only the catalog's kind of name (never `.` or `$`). */
const CATEGORY = /^[a-z_]{1,40}$/;

export class UsageCounter {
  /** This process, as the owner of its usage slots and hourly documents. */
  private readonly owner = ulid();
  private readonly months = new Map<string, Pending>();
  private readonly lock = new KeyedLock();
  private lastFlush = 0;

  constructor(
    private readonly usage: UsageRepo,
    private readonly clock: Clock,
  ) {}

  private pending(accountId: string, period: string): Pending {
    const key = `${accountId}:${period}`;
    const m = this.months.get(key) ?? { accountId, period, live: {}, test: {}, hours: new Map(), slot: null };
    this.months.set(key, m);
    return m;
  }

  private maybeFlush(now: number): void {
    if (now - this.lastFlush >= FLUSH_MS) void this.flush().catch(() => {});
  }

  /** Counts an admitted call (test keys apart); the returned function uncounts it. */
  count(accountId: string, test: boolean): () => void {
    const now = this.clock.now();
    const m = this.pending(accountId, periodOf(now));
    const day = dayOf(now);
    const counts = () => (test ? m.test : m.live);
    counts()[day] = (counts()[day] ?? 0) + 1;
    this.maybeFlush(now);
    return () => {
      counts()[day] = (counts()[day] ?? 0) - 1;
    };
  }

  /** Counts an identification served (its event stored) in its project's hour. */
  served(s: Served): void {
    const m = this.pending(s.accountId, periodOf(s.timestamp));
    const key = `${s.projectId}|${utcDay(s.timestamp)}`;
    const inc = m.hours.get(key) ?? {};
    m.hours.set(key, inc);
    const hour = `h${new Date(s.timestamp).toISOString().slice(11, 13)}`;
    const one = (field: string) => (inc[`${hour}.${field}`] = (inc[`${hour}.${field}`] ?? 0) + 1);
    one('n');
    if (s.bot !== 'none') one('bots');
    if (s.suspect) one('suspects');
    if (s.category !== undefined && CATEGORY.test(s.category)) one(`${s.bot === 'good' ? 'good' : 'bad'}.${s.category}`);
    this.maybeFlush(this.clock.now());
  }

  /** A month's usage, with this process's pending calls written first. */
  async month(accountId: string, period: string): Promise<MonthUsage> {
    await this.flush();
    return this.usage.month(accountId, period);
  }

  /** A project's hourly documents of these days, every process's, with this process's pending counts written first. */
  async hourly(projectId: string, firstDay: string, lastDay: string): Promise<{ day: string; hours: Record<string, HourDoc> }[]> {
    await this.flush();
    return this.usage.hourly(projectId, firstDay, lastDay);
  }

  /** Writes every month's pending calls and identifications, each month's in one command. */
  async flush(): Promise<void> {
    this.lastFlush = this.clock.now();
    const current = periodOf(this.lastFlush);
    await Promise.all(
      [...this.months.entries()].map(([key, m]) =>
        this.lock.run(key, async () => {
          const [live, test, hours] = [nonZero(m.live), nonZero(m.test), m.hours];
          m.live = {};
          m.test = {};
          m.hours = new Map();
          const calls = Object.keys(live).length > 0 || Object.keys(test).length > 0;
          if (calls || hours.size) {
            try {
              if (calls) m.slot ??= await this.usage.claimSlot(m.accountId, m.period, this.owner);
              await this.usage.count(this.owner, calls ? m.slot : null, live, test, hours);
            } catch (err) {
              add(m.live, live);
              add(m.test, test);
              for (const [doc, inc] of hours) {
                const mine = m.hours.get(doc) ?? {};
                m.hours.set(doc, mine);
                add(mine, inc);
              }
              throw err;
            }
          }
          // A past month gets no more calls.
          if (m.period !== current && !Object.keys(m.live).length && !Object.keys(m.test).length && !m.hours.size) this.months.delete(key);
        }),
      ),
    );
  }
}
