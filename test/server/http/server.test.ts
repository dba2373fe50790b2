// The server's limits on slow and idle clients (REQUEST_TIMEOUT_MS,
// HEADERS_TIMEOUT_MS, KEEP_ALIVE_TIMEOUT_MS, MAX_CONNECTIONS), on the server
// main.ts builds around the real app, over raw connections. Node enforces
// the timeouts with its own timers: the test sets them short.
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer } from '../../../server/http/server.js';
import { createHarness, type Harness } from '../../support/harness.js';
import { listen, type Listening } from '../../support/httpServer.js';

let h: Harness;
let served: Listening;
beforeAll(async () => {
  h = await createHarness(import.meta.filename, { REQUEST_TIMEOUT_MS: '600', HEADERS_TIMEOUT_MS: '300', KEEP_ALIVE_TIMEOUT_MS: '1000', MAX_CONNECTIONS: '2' });
  served = await listen(createServer(h.config, h.app));
});
afterAll(async () => {
  await served.close();
  await h.close();
});

interface Exchange {
  received: () => string;
  /** Resolves with the milliseconds from the connection to its closing by the server, or null if it still stands after 5 s. */
  closed: Promise<number | null>;
  socket: ReturnType<typeof connect>;
}

function open(data: string): Exchange {
  const started = Date.now();
  const socket = connect(Number(new URL(served.url).port), '127.0.0.1');
  let received = '';
  socket.on('error', () => {});
  socket.on('data', (chunk) => (received += chunk.toString()));
  socket.write(data);
  const closed = new Promise<number | null>((resolve) => {
    const giveUp = setTimeout(() => resolve(null), 5_000);
    socket.once('close', () => {
      clearTimeout(giveUp);
      resolve(Date.now() - started);
    });
  });
  void closed.then(() => socket.destroy());
  return { received: () => received, closed, socket };
}

describe('server limits', () => {
  it('answers 408 and closes the connection of a body still incomplete after REQUEST_TIMEOUT_MS', async () => {
    // The audit's slow body: 261,998 of 262,000 bytes.
    const slow = open(
      'POST /v1/identify HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\ncontent-length: 262000\r\n\r\n' + '{"pad":"' + 'p'.repeat(261_990),
    );
    const ms = await slow.closed;
    expect(ms).not.toBeNull();
    expect(ms).toBeGreaterThanOrEqual(550);
    expect(slow.received()).toMatch(/^HTTP\/1\.1 408 /);
  });

  it('answers 408 and closes the connection of headers still incomplete after HEADERS_TIMEOUT_MS', async () => {
    const slow = open('GET /healthz HTTP/1.1\r\nhost: localhost\r\n');
    const ms = await slow.closed;
    expect(ms).not.toBeNull();
    expect(ms).toBeGreaterThanOrEqual(250);
    expect(slow.received()).toMatch(/^HTTP\/1\.1 408 /);
  });

  it('closes a keep-alive connection idle for KEEP_ALIVE_TIMEOUT_MS', async () => {
    const idle = open('GET /healthz HTTP/1.1\r\nhost: localhost\r\n\r\n');
    const ms = await idle.closed;
    // Node 20 closes it a second after the time it announces (to clients, in whole seconds).
    expect(ms).not.toBeNull();
    expect(ms).toBeGreaterThanOrEqual(1_000);
    expect(idle.received()).toMatch(/^HTTP\/1\.1 200 [^]*\r\nKeep-Alive: timeout=1\r\n/);
  });

  it('closes connections beyond MAX_CONNECTIONS on arrival, and takes new ones once there is room', async () => {
    const held = [open(''), open('')];
    await new Promise((resolve) => held[1]!.socket.once('connect', resolve));
    const third = open('GET /healthz HTTP/1.1\r\nhost: localhost\r\n\r\n');
    expect(await third.closed).not.toBeNull();
    expect(third.received()).toBe('');
    for (const socket of held) socket.socket.destroy();
    await Promise.all(held.map((e) => e.closed));
    const later = open('GET /healthz HTTP/1.1\r\nhost: localhost\r\n\r\n');
    await new Promise((resolve) => later.socket.once('data', resolve));
    expect(later.received()).toMatch(/^HTTP\/1\.1 200 /);
    later.socket.destroy();
  });
});
