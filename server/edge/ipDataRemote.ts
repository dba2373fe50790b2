// IP data over an IPC channel: a cluster worker asks the primary
// (remoteIpData), the primary answers from the one copy it loaded
// (serveIpData). One message each way per address the worker has not seen
// recently; a bounded LRU in the worker keeps recent answers, since the same
// addresses come back. A lookup the primary does not answer in time, or
// asked while (or after) the primary goes away, fails with the service's
// 503 instead of holding the request.
import type { EventEmitter } from 'node:events';
import { serviceUnavailable } from '../errors.js';
import { normalizeIp } from './address.js';
import type { IpData, IpFacts } from './ipData.js';

/** The two ends of a Node IPC channel, as both sides use them. */
export interface Channel {
  connected(): boolean;
  /** The callback hears whether the message was handed to the channel. */
  send(message: object, callback: (err: Error | null) => void): void;
  /** Listens for messages and for the channel's end; returns the unsubscribe. */
  listen(onMessage: (message: unknown) => void, onDisconnect: () => void): () => void;
}

type Endpoint = Pick<EventEmitter, 'on' | 'off'> & {
  readonly connected: boolean;
  send?: (message: object, callback: (err: Error | null) => void) => boolean;
};

/** `process` in a worker (its primary), or a ChildProcess / cluster Worker's `process` in the primary. */
export function channelOf(endpoint: Endpoint): Channel {
  return {
    connected: () => endpoint.connected,
    send(message, callback) {
      // Always with a callback: without one a closed channel's error is thrown at the process.
      if (endpoint.send && endpoint.connected) endpoint.send(message, callback);
      else process.nextTick(callback, new Error('no IPC channel'));
    },
    listen(onMessage, onDisconnect) {
      endpoint.on('message', onMessage);
      endpoint.on('disconnect', onDisconnect);
      return () => {
        endpoint.off('message', onMessage);
        endpoint.off('disconnect', onDisconnect);
      };
    },
  };
}

const ASK = 'deviceid:ip?';
const ANSWER = 'deviceid:ip';

interface Ask {
  t: typeof ASK;
  id: number;
  address: string;
}
type Answer = { t: typeof ANSWER; id: number } & ({ facts: IpFacts } | { error: string });

const isAsk = (m: unknown): m is Ask => typeof m === 'object' && m !== null && (m as Ask).t === ASK && typeof (m as Ask).id === 'number';
const isAnswer = (m: unknown): m is Answer => typeof m === 'object' && m !== null && (m as Answer).t === ANSWER && typeof (m as Answer).id === 'number';

/** The primary's side: answers every lookup the channel brings. Returns the unsubscribe. */
export function serveIpData(channel: Channel, data: IpData): () => void {
  const reply = (answer: Answer) => channel.send(answer, () => {}); // a worker that went away needs no answer
  return channel.listen(
    (m) => {
      if (!isAsk(m)) return;
      const ip = typeof m.address === 'string' ? normalizeIp(m.address) : null;
      if (!ip) return reply({ t: ANSWER, id: m.id, error: 'not an IP address' });
      data.lookup(ip).then(
        (facts) => reply({ t: ANSWER, id: m.id, facts }),
        (err: unknown) => reply({ t: ANSWER, id: m.id, error: err instanceof Error ? err.message : String(err) }),
      );
    },
    () => {},
  );
}

export const DEFAULT_TIMEOUT_MS = 2_000;
export const DEFAULT_CACHE_SIZE = 10_000;

/** 503 with Retry-After, as while the database is away: retrying soon is the right move. */
const unavailable = () => serviceUnavailable(1);

export interface RemoteOptions {
  /** How long a lookup waits for the primary; default 2 s. */
  timeoutMs?: number;
  /** Recent answers kept (by address); default 10,000. */
  cacheSize?: number;
  /** Hears once that the channel closed. */
  onDisconnect?: () => void;
}

/** The worker's side: lookups asked of the primary, matched to answers by id. */
export function remoteIpData(channel: Channel, opts: RemoteOptions = {}): IpData {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const cacheSize = opts.cacheSize ?? DEFAULT_CACHE_SIZE;
  const pending = new Map<number, { resolve: (f: IpFacts) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }>();
  // Map order is insertion order: re-inserting on a hit makes the first key the least recent.
  const recent = new Map<string, Promise<IpFacts>>();
  let nextId = 0;
  let open = true;

  const settle = (id: number): { resolve: (f: IpFacts) => void; reject: (e: Error) => void } | undefined => {
    const p = pending.get(id);
    if (!p) return undefined;
    pending.delete(id);
    clearTimeout(p.timer);
    return p;
  };
  const failAll = () => {
    for (const id of [...pending.keys()]) settle(id)?.reject(unavailable());
  };
  const unlisten = channel.listen(
    (m) => {
      if (!isAnswer(m)) return;
      const p = settle(m.id); // unknown ids are answers that came after their timeout
      if (!p) return;
      if ('facts' in m) p.resolve(m.facts);
      else p.reject(new Error(`IP lookup failed in the cluster primary: ${m.error}`));
    },
    () => {
      if (!open) return;
      open = false;
      failAll();
      opts.onDisconnect?.();
    },
  );

  const ask = (address: string) =>
    new Promise<IpFacts>((resolve, reject) => {
      if (!open || !channel.connected()) return reject(unavailable());
      const id = ++nextId;
      const timer = setTimeout(() => settle(id)?.reject(unavailable()), timeoutMs);
      timer.unref();
      pending.set(id, { resolve, reject, timer });
      channel.send({ t: ASK, id, address } satisfies Ask, (err) => {
        if (err) settle(id)?.reject(unavailable());
      });
    });

  return {
    where: 'primary',
    lookup(ip) {
      const hit = recent.get(ip.address);
      if (hit) {
        recent.delete(ip.address);
        recent.set(ip.address, hit);
        return hit;
      }
      // The promise is what is kept, so that concurrent requests from one address ask once.
      const answer = ask(ip.address);
      recent.set(ip.address, answer);
      if (recent.size > cacheSize) recent.delete(recent.keys().next().value!);
      answer.catch(() => {
        if (recent.get(ip.address) === answer) recent.delete(ip.address);
      });
      return answer;
    },
    close() {
      open = false;
      unlisten();
      failAll();
      recent.clear();
    },
  };
}
