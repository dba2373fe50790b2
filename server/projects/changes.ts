// A project setting that identify reads from caches (its document, the
// compiled ruleset, the lists) changed: every process of the instance drops
// its copies before the change is answered, so that the next identify in any
// worker runs on it. Within one process the listeners run at once; in a
// cluster worker the primary relays the change to every worker (this one
// included) and answers once each has dropped its copies, or after
// RELAY_TIMEOUT_MS (a worker that does not answer is stuck or gone, and a
// worker's caches expire within CACHE_TTL_MS anyway). Processes of other
// instances on the same database see the change within CACHE_TTL_MS.
import cluster, { type Worker } from 'node:cluster';
import { channelOf, type Channel } from '../edge/ipDataRemote.js';

const CHANGED = 'deviceid:project-changed';
const DROPPED = 'deviceid:project-dropped';
const RELAYED = 'deviceid:project-relayed';
export const RELAY_TIMEOUT_MS = 1_000;

interface Changed {
  t: typeof CHANGED;
  id: number;
  projectId: string;
}
interface Ack {
  t: typeof DROPPED | typeof RELAYED;
  id: number;
}

const isChanged = (m: unknown): m is Changed =>
  typeof m === 'object' && m !== null && (m as Changed).t === CHANGED && typeof (m as Changed).projectId === 'string' && typeof (m as Changed).id === 'number';
const isAck = (m: unknown, t: Ack['t']): m is Ack => typeof m === 'object' && m !== null && (m as Ack).t === t && typeof (m as Ack).id === 'number';

export class ProjectChanges {
  private readonly listeners: ((projectId: string) => void)[] = [];
  private next = 1;
  private readonly waiting = new Map<number, () => void>();

  /** `primary`: the channel to the cluster's primary in a worker; none in a process of its own. */
  constructor(private readonly primary: Channel | null = cluster.isWorker ? channelOf(process) : null) {
    this.primary?.listen(
      (m) => {
        if (isChanged(m)) {
          this.drop(m.projectId);
          this.primary!.send({ t: DROPPED, id: m.id }, () => {});
        } else if (isAck(m, RELAYED)) {
          this.waiting.get(m.id)?.();
        }
      },
      () => this.waiting.forEach((done) => done()),
    );
  }

  /** `fn` drops this process's copies of the project's cached settings. */
  onChange(fn: (projectId: string) => void): void {
    this.listeners.push(fn);
  }

  /** Resolves once every process of the instance has dropped its copies (or the relay gave up waiting). */
  async announce(projectId: string): Promise<void> {
    this.drop(projectId);
    const primary = this.primary;
    if (!primary?.connected()) return;
    const id = this.next++;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiting.delete(id);
        resolve();
      };
      // The primary answers within its own timeout; this one only covers a primary that is gone.
      const timer = setTimeout(done, RELAY_TIMEOUT_MS * 2);
      this.waiting.set(id, done);
      primary.send({ t: CHANGED, id, projectId }, (err) => err && done());
    });
  }

  private drop(projectId: string): void {
    for (const fn of this.listeners) fn(projectId);
  }
}

/**
 * The primary's side: relays a worker's change to every worker and tells the
 * announcer once all have answered (or after RELAY_TIMEOUT_MS). `relay(w)`
 * is called once per forked worker; one listener per worker serves every
 * change, so concurrent changes add no listeners.
 */
export function relayProjectChanges(workers: () => Iterable<Worker>): (worker: Worker) => void {
  let next = 1;
  /** Relays waiting for workers to drop their copies: the workers still to answer, and the announcer's answer. */
  const pending = new Map<number, { waiting: Set<Worker>; finish: () => void }>();
  const answered = (w: Worker, relayId: number) => {
    const p = pending.get(relayId);
    if (p?.waiting.delete(w) && p.waiting.size === 0) p.finish();
  };
  return (worker) => {
    const channel = channelOf(worker.process);
    channel.listen(
      (m) => {
        if (isAck(m, DROPPED)) return answered(worker, m.id);
        if (!isChanged(m)) return;
        const relayId = next++;
        const targets = [...workers()].filter((w) => w.isConnected());
        const finish = () => {
          clearTimeout(timer);
          pending.delete(relayId);
          channel.send({ t: RELAYED, id: m.id }, () => {});
        };
        const timer = setTimeout(finish, RELAY_TIMEOUT_MS);
        pending.set(relayId, { waiting: new Set(targets), finish });
        if (targets.length === 0) return finish();
        for (const w of targets) channelOf(w.process).send({ t: CHANGED, id: relayId, projectId: m.projectId }, (err) => err && answered(w, relayId));
      },
      // A worker that goes away answers every relay it was part of.
      () => [...pending.keys()].forEach((id) => answered(worker, id)),
    );
  };
}
