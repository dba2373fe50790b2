// IP lookups asked of the cluster primary over IPC (server/edge/ipDataRemote.ts):
// answers reach the request that asked even when they come back out of
// order, a primary that does not answer in time or goes away fails the
// lookup with the service's 503 (never a hang), and recent answers are kept
// in a bounded LRU. Over a fake channel with random delays, and over a real
// Node IPC channel to a forked process that is then killed.
import { fork, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../../server/errors.js';
import { normalizeIp } from '../../../server/edge/address.js';
import type { IpData, IpFacts } from '../../../server/edge/ipData.js';
import { channelOf, remoteIpData, serveIpData, type Channel } from '../../../server/edge/ipDataRemote.js';

const ip = (s: string) => normalizeIp(s)!;

const factsFor = (address: string): IpFacts => ({
  location: { country: 'ZZ', city: address, region: '', latitude: null, longitude: null, timezone: null },
  asn: { asn: address.length, org: `org of ${address}`, prefix: `${address}/${address.includes(':') ? 128 : 32}` },
});

/** Two ends of a pretend IPC channel: messages are copied (as JSON, like Node's) and delivered after `delay()` ms. */
function linked(delay: () => number = () => 0) {
  const ends = [new EventEmitter(), new EventEmitter()] as const;
  let connected = true;
  const sent: unknown[][] = [[], []];
  const end = (self: 0 | 1): Channel => ({
    connected: () => connected,
    send(message, callback) {
      if (!connected) return void setImmediate(callback, new Error('channel closed'));
      sent[self]!.push(message);
      const copy: unknown = JSON.parse(JSON.stringify(message));
      setTimeout(() => connected && ends[1 - self]!.emit('message', copy), delay());
      setImmediate(callback, null);
    },
    listen(onMessage, onDisconnect) {
      ends[self].on('message', onMessage);
      ends[self].on('disconnect', onDisconnect);
      return () => {
        ends[self].off('message', onMessage);
        ends[self].off('disconnect', onDisconnect);
      };
    },
  });
  return {
    worker: end(0),
    primary: end(1),
    /** Messages the worker sent (its questions). */
    asked: sent[0]!,
    disconnect() {
      connected = false;
      for (const e of ends) e.emit('disconnect');
    },
  };
}

const answering = (lookup: IpData['lookup'] = async (i) => factsFor(i.address)): IpData => ({ where: 'local', lookup, close: () => {} });

async function rejection(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => {
      throw new Error('expected a rejection');
    },
    (err: unknown) => err,
  );
}

function expect503(err: unknown): void {
  expect(err).toBeInstanceOf(ApiError);
  expect((err as ApiError).status).toBe(503);
  expect((err as ApiError).code).toBe('service_unavailable');
  expect((err as ApiError).headers['Retry-After']).toBeDefined();
}

describe('remote IP data over a channel', () => {
  it('matches each answer to the request that asked, under concurrency with answers out of order', async () => {
    const ch = linked(() => Math.random() * 15);
    serveIpData(ch.primary, answering());
    const remote = remoteIpData(ch.worker);
    const addresses = Array.from({ length: 300 }, (_, i) => (i % 3 === 0 ? `2001:db8::${i.toString(16)}` : `198.51.${i >> 8}.${i & 255}`));
    const answers = await Promise.all(addresses.map((a) => remote.lookup(ip(a))));
    expect(answers).toEqual(addresses.map((a) => factsFor(ip(a).address)));
    expect(ch.asked).toHaveLength(300);
    expect(remote.where).toBe('primary');
    remote.close();
  });

  it('asks once per address while it is recent: concurrent and later lookups share the answer', async () => {
    const ch = linked(() => 5);
    serveIpData(ch.primary, answering());
    const remote = remoteIpData(ch.worker);
    const [a, b] = await Promise.all([remote.lookup(ip('8.8.8.8')), remote.lookup(ip('8.8.8.8'))]);
    expect(a).toEqual(factsFor('8.8.8.8'));
    expect(b).toEqual(a);
    expect(await remote.lookup(ip('8.8.8.8'))).toEqual(a);
    expect(ch.asked).toHaveLength(1);
    remote.close();
  });

  it('keeps at most cacheSize answers, dropping the least recently used', async () => {
    const ch = linked();
    serveIpData(ch.primary, answering());
    const remote = remoteIpData(ch.worker, { cacheSize: 2 });
    const look = (a: string) => remote.lookup(ip(a));
    await look('1.0.0.1');
    await look('1.0.0.2');
    await look('1.0.0.1'); // now the more recent of the two
    await look('1.0.0.3'); // drops 1.0.0.2
    expect(ch.asked).toHaveLength(3);
    await look('1.0.0.1');
    expect(ch.asked).toHaveLength(3);
    await look('1.0.0.2');
    expect(ch.asked).toHaveLength(4);
    remote.close();
  });

  it('fails with 503 when the primary does not answer in time, ignores the late answer and asks again next time', async () => {
    const ch = linked(() => 0);
    let slow = true;
    serveIpData(
      ch.primary,
      answering(async (i) => {
        if (slow) await new Promise((r) => setTimeout(r, 300));
        return factsFor(i.address);
      }),
    );
    const remote = remoteIpData(ch.worker, { timeoutMs: 50 });
    expect503(await rejection(remote.lookup(ip('9.9.9.9'))));
    await new Promise((r) => setTimeout(r, 350)); // the late answer arrives and is dropped
    slow = false;
    expect(await remote.lookup(ip('9.9.9.9'))).toEqual(factsFor('9.9.9.9'));
    expect(ch.asked).toHaveLength(2);
    remote.close();
  });

  it('fails lookups in flight with 503 when the primary goes away, and later ones at once without sending', async () => {
    const ch = linked(() => 0);
    serveIpData(
      ch.primary,
      answering(() => new Promise(() => {})),
    );
    let heard = 0;
    const remote = remoteIpData(ch.worker, { timeoutMs: 60_000, onDisconnect: () => heard++ });
    const inFlight = [remote.lookup(ip('8.8.4.4')), remote.lookup(ip('2001:4860:4860::8844'))];
    await new Promise((r) => setTimeout(r, 10));
    ch.disconnect();
    for (const p of inFlight) expect503(await rejection(p));
    expect(heard).toBe(1);
    const asked = ch.asked.length;
    expect503(await rejection(remote.lookup(ip('1.1.1.1'))));
    expect(ch.asked).toHaveLength(asked);
    remote.close();
  });

  it('a lookup the primary could not make fails (500, not cached); a question that is not an address gets an error answer', async () => {
    const ch = linked();
    let fail = true;
    serveIpData(
      ch.primary,
      answering(async (i) => {
        if (fail) throw new Error('reader broke');
        return factsFor(i.address);
      }),
    );
    const remote = remoteIpData(ch.worker);
    const err = await rejection(remote.lookup(ip('8.8.8.8')));
    expect(err).not.toBeInstanceOf(ApiError);
    expect((err as Error).message).toMatch(/reader broke/);
    fail = false;
    expect(await remote.lookup(ip('8.8.8.8'))).toEqual(factsFor('8.8.8.8'));

    const answer = new Promise((resolve) =>
      ch.worker.listen(
        (m) => (m as { id: number }).id === 99_999 && resolve(m),
        () => {},
      ),
    );
    ch.worker.send({ t: 'deviceid:ip?', id: 99_999, address: 'not an address' }, () => {});
    expect(await answer).toEqual({ t: 'deviceid:ip', id: 99_999, error: 'not an IP address' });
    remote.close();
  });

  it('close() fails what is in flight with 503 and stops listening', async () => {
    const ch = linked();
    serveIpData(
      ch.primary,
      answering(() => new Promise(() => {})),
    );
    const remote = remoteIpData(ch.worker, { timeoutMs: 60_000 });
    const p = remote.lookup(ip('8.8.8.8'));
    remote.close();
    expect503(await rejection(p));
    expect503(await rejection(remote.lookup(ip('8.8.8.8'))));
  });
});

describe('remote IP data over a real IPC channel', () => {
  let child: ChildProcess | undefined;
  afterAll(() => void child?.kill('SIGKILL'));

  it('answers through a forked process, and fails with 503 when that process is killed mid-lookup', async () => {
    child = fork(join(import.meta.dirname, '../../fixtures/ipDataPrimary.ts'), [], {
      execArgv: ['--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    await new Promise<void>((resolve, reject) => {
      child!.once('message', () => resolve());
      child!.once('exit', (code) => reject(new Error(`the fixture exited (${code})`)));
    });
    const remote = remoteIpData(channelOf(child), { timeoutMs: 60_000 });
    const addresses = Array.from({ length: 100 }, (_, i) => `198.51.100.${i}`);
    expect(await Promise.all(addresses.map((a) => remote.lookup(ip(a))))).toEqual(addresses.map(factsFor));

    const hanging = remote.lookup(ip('203.0.113.99'));
    child.kill('SIGKILL');
    expect503(await rejection(hanging));
    expect503(await rejection(remote.lookup(ip('203.0.113.200'))));
    remote.close();
  }, 30_000);
});
