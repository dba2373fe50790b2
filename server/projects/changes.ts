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
 * announcer once all have answered (or after RELAY_TIMEOUT_MS).
 */
export function relayProjectChanges(workers: () => Iterable<Worker>): (from: Worker) => void {
  let next = 1;
  return (from) => {
    const channel = channelOf(from.process);
    channel.listen(
      (m) => {
        if (!isChanged(m)) return;
        const targets = [...workers()].filter((w) => w.isConnected());
        const relayId = next++;
        let pending = targets.length;
        const unsubscribes: (() => void)[] = [];
        let finished = false;
        const finish = () => {
          if (finished) return;
          finished = true;
          clearTimeout(timer);
          unsubscribes.forEach((u) => u());
          channel.send({ t: RELAYED, id: m.id }, () => {});
        };
        const timer = setTimeout(finish, RELAY_TIMEOUT_MS);
        if (pending === 0) return finish();
        for (const w of targets) {
          const c = channelOf(w.process);
          unsubscribes.push(
            c.listen(
              (a) => {
                if (isAck(a, DROPPED) && a.id === relayId && --pending === 0) finish();
              },
              () => --pending === 0 && finish(),
            ),
          );
          c.send({ t: CHANGED, id: relayId, projectId: m.projectId }, (err) => err && --pending === 0 && finish());
        }
      },
      () => {},
    );
  };
}
