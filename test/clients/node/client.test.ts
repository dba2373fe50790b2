// deviceid/client against the real service listening on a real port.
import { inspect } from 'node:util';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import type { z } from 'zod';
import {
  AuthError,
  createIdentifyClient,
  createServerClient,
  DeviceIdError,
  NotFoundError,
  ValidationError,
  type FullEvent,
  type IdentifyRequest,
  type IdentifyResult,
  type ServerClient,
  type Visit,
  type VisitHistory,
} from '../../../clients/node/index.js';
import type { FullEventSchema } from '../../../contract/events.js';
import type { IdentifyResultAnswerSchema } from '../../../contract/identify.js';
import type { VisitHistorySchema } from '../../../contract/visits.js';
import { signUp, type Customer } from '../../support/dashboard.js';
import { createHarness, type Harness } from '../../support/harness.js';
import { listenApp, type Listening } from '../../support/httpServer.js';
import { deviceValues, identifyBody } from '../../support/signals.js';

let h: Harness;
let srv: Listening;
let c: Customer;
let live: string;
let secret: string;
let server: ServerClient;

beforeAll(async () => {
  h = await createHarness(import.meta.filename, { PLANS: '{"free":{"rps":1000}}' });
  srv = await listenApp(h.app);
  c = await signUp(h);
  live = await c.key('live');
  secret = await c.key('secret');
  // validateResponses: every body below is also checked against the contract's schemas.
  server = createServerClient({ baseUrl: srv.url, secretKey: secret, validateResponses: true });
});
afterAll(async () => {
  await srv.close();
  await h.close();
});

let seed = 7000;
const req = (...args: Parameters<typeof identifyBody>) => identifyBody(...args) as unknown as IdentifyRequest;
const identifyClient = () => createIdentifyClient({ baseUrl: srv.url, apiKey: live, validateResponses: true });

describe('types come from the contract', () => {
  it('infers the result types of the contract schemas', () => {
    expectTypeOf<FullEvent>().toEqualTypeOf<z.infer<typeof FullEventSchema>>();
    expectTypeOf<IdentifyResult>().toEqualTypeOf<z.infer<typeof IdentifyResultAnswerSchema>>();
    expectTypeOf<VisitHistory>().toEqualTypeOf<z.infer<typeof VisitHistorySchema>>();
    expectTypeOf(server.getEvent).returns.resolves.toEqualTypeOf<FullEvent>();
    expectTypeOf(server.visits).returns.toEqualTypeOf<AsyncIterableIterator<Visit>>();
  });
});

describe('identify, getEvent, updateEvent, searchEvents', () => {
  it('identifies with a live key and reads back the full event with the secret key', async () => {
    const values = deviceValues(++seed);
    const result = await identifyClient().identify(req(values, { linkedId: 'order-1', tag: { cart: 3, 'a.b': true } }));
    expect(result.requestId).toMatch(/^req_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(result.visitorId).toMatch(/^iq_/);
    expect(result.visitCount).toBe(1);
    expect(result.timestamp).toBe(h.clock.now());
    expect(result).not.toHaveProperty('signals');

    const event = await server.getEvent(result.requestId);
    expect(event).toMatchObject({
      requestId: result.requestId,
      visitorId: result.visitorId,
      linkedId: 'order-1',
      tag: { cart: 3, 'a.b': true },
      suspect: false,
      url: 'https://shop.example.com/checkout',
      timestamp: result.timestamp,
    });
    expect(event.signals.client.canvas).toEqual(values.canvas);
    expect(Object.keys(event.verdicts.velocity.events)).toEqual(['5m', '1h', '24h']);
    expect(new Date(event.createdAt).toISOString()).toBe(event.createdAt);
  });

  it('updates an event (suspect flag, linkedId, tag) and finds it by linkedId, newest first', async () => {
    const ic = identifyClient();
    const a = await ic.identify(req(deviceValues(++seed), { linkedId: 'user-42' }));
    h.clock.advance(1000);
    const b = await ic.identify(req(deviceValues(++seed), { linkedId: 'user-42' }));

    const found = await server.searchEvents({ linkedId: 'user-42' });
    expect(found.events.map((e) => e.requestId)).toEqual([b.requestId, a.requestId]);
    expect((await server.searchEvents({ linkedId: 'user-42', limit: 1 })).events.map((e) => e.requestId)).toEqual([b.requestId]);

    const updated = await server.updateEvent(a.requestId, { suspect: true, linkedId: 'user-43', tag: { reviewed: 'yes' } });
    expect(updated).toMatchObject({ requestId: a.requestId, suspect: true, linkedId: 'user-43', tag: { reviewed: 'yes' } });
    expect(await server.getEvent(a.requestId)).toMatchObject({ suspect: true, linkedId: 'user-43' });
    expect((await server.searchEvents({ linkedId: 'user-42' })).events.map((e) => e.requestId)).toEqual([b.requestId]);

    const cleared = await server.updateEvent(a.requestId, { linkedId: null, tag: null });
    expect(cleared).not.toHaveProperty('linkedId');
    expect(cleared).not.toHaveProperty('tag');
  });

  it('returns an empty search for an unknown linkedId', async () => {
    expect(await server.searchEvents({ linkedId: 'nobody-has-this' })).toEqual({ events: [] });
  });
});

describe('visit history', () => {
  it('pages through 45 visits with the before cursor: 20 + 20 + 5, newest first, none twice', async () => {
    const values = deviceValues(++seed);
    const ic = identifyClient();
    const firstAt = h.clock.now();
    let visitorId = '';
    for (let i = 0; i < 45; i++) {
      visitorId = (await ic.identify(req(values))).visitorId;
      h.clock.advance(1000);
    }

    const first = await server.getVisits(visitorId);
    expect(first.totalVisits).toBe(45);
    expect(first.firstSeenAt).toBe(firstAt);
    expect(first.visits).toHaveLength(20);

    const pages: VisitHistory[] = [];
    for await (const page of server.visitPages(visitorId)) pages.push(page);
    expect(pages.map((p) => p.visits.length)).toEqual([20, 20, 5]);
    expect(pages[0]).toEqual(first);

    const all: Visit[] = [];
    for await (const v of server.visits(visitorId)) all.push(v);
    expect(all).toHaveLength(45);
    expect(new Set(all.map((v) => v.id)).size).toBe(45);
    expect(all.map((v) => v.timestamp)).toEqual(Array.from({ length: 45 }, (_, i) => firstAt + (44 - i) * 1000));
    expect(all[0]!.signals.client.canvas).toEqual(values.canvas);

    // A timestamp cursor, a visit-id cursor, and a page limit.
    const byTime = await server.getVisits(visitorId, { before: firstAt + 3000 });
    expect(byTime.visits.map((v) => v.timestamp)).toEqual([firstAt + 2000, firstAt + 1000, firstAt]);
    const byId = await server.getVisits(visitorId, { before: all[42]!.id });
    expect(byId.visits.map((v) => v.id)).toEqual([all[43]!.id, all[44]!.id]);
    const limited: VisitHistory[] = [];
    for await (const page of server.visitPages(visitorId, { before: all[9]!.id, maxPages: 1 })) limited.push(page);
    expect(limited.map((p) => p.visits[0]!.id)).toEqual([all[10]!.id]);
  });

  it('stops iterating early when the loop breaks (no further requests needed)', async () => {
    const values = deviceValues(++seed);
    const ic = identifyClient();
    let visitorId = '';
    for (let i = 0; i < 3; i++) {
      visitorId = (await ic.identify(req(values))).visitorId;
      h.clock.advance(1000);
    }
    let n = 0;
    for await (const v of server.visits(visitorId)) {
      expect(v.id).toBeTypeOf('string');
      if (++n === 2) break;
    }
    expect(n).toBe(2);
  });
});

describe('typed errors from the real service', () => {
  it('NotFoundError for an unknown event, another account’s event, and an unknown visitor', async () => {
    const r = await identifyClient().identify(req(deviceValues(++seed)));
    const other = await signUp(h);
    const otherServer = createServerClient({ baseUrl: srv.url, secretKey: await other.key('secret') });
    const errors = await Promise.all(
      [
        server.getEvent('req_01JD0S3V6ZQ8Y0K2W3ZP4X5Y6Z'),
        otherServer.getEvent(r.requestId),
        otherServer.updateEvent(r.requestId, { suspect: true }),
        server.getVisits('iq_01JD0S3V6ZQ8Y0K2W3ZP4X5Y6Z'),
      ].map((p) =>
        p.then(
          () => undefined,
          (e: unknown) => e,
        ),
      ),
    );
    for (const err of errors) {
      expect(err).toBeInstanceOf(NotFoundError);
      expect(err).toBeInstanceOf(DeviceIdError);
      expect(err).toMatchObject({ code: 'not_found', status: 404, attempts: 1 });
      expect((err as NotFoundError).serverMessage).toMatch(/^(Event|Visitor) not found$/);
      expect((err as NotFoundError).requestId).toMatch(/^rid_/);
    }
    // The flag was not set by the other account.
    expect((await server.getEvent(r.requestId)).suspect).toBe(false);
  });

  it('AuthError (401) for a revoked secret key, and neither message nor inspection shows the key', async () => {
    const doomed = await c.key('secret');
    const list = await c.agent.get(`/api/projects/${c.projectId}/keys`);
    const id = list.body.keys.find((k: { hint: string }) => k.hint.endsWith(doomed.slice(-4)) && k.hint.startsWith('svc_secret_')).id;
    await c.agent.delete(`/api/projects/${c.projectId}/keys/${id}`).set('origin', c.origin);
    const client = createServerClient({ baseUrl: srv.url, secretKey: doomed });
    const errors = await Promise.all(
      [client.getEvent('req_01JD0S3V6ZQ8Y0K2W3ZP4X5Y6Z'), client.getVisits('iq_01JD0S3V6ZQ8Y0K2W3ZP4X5Y6Z')].map((p) =>
        p.then(
          () => undefined,
          (e: unknown) => e,
        ),
      ),
    );
    for (const err of errors) {
      expect(err).toBeInstanceOf(AuthError);
      expect(err).toMatchObject({ status: 401, code: 'auth', body: { error: 'Invalid or missing secret key' } });
      const shown = `${String(err)}\n${(err as Error).stack}\n${inspect(err, { depth: Infinity, showHidden: true })}\n${JSON.stringify(err)}`;
      expect(shown).not.toContain(doomed);
      expect(shown).not.toContain(doomed.slice(11, 30));
    }
    // An unknown identify key: the identify endpoint's 401.
    const badIdentify = await createIdentifyClient({ baseUrl: srv.url, apiKey: 'svc_live_0000000000000000000000000000000000000000' })
      .identify(req(deviceValues(++seed)))
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(badIdentify).toBeInstanceOf(AuthError);
    expect(badIdentify).toMatchObject({ status: 401, serverMessage: 'Invalid or missing API key' });
  });

  it('ValidationError (400) for a bad cursor, an empty update and an identify body without signals', async () => {
    const r = await identifyClient().identify(req(deviceValues(++seed)));
    const errors = await Promise.all([
      server.getVisits(r.visitorId, { before: 'not-a-cursor' }).catch((e: unknown) => e),
      server.updateEvent(r.requestId, {}).catch((e: unknown) => e),
      identifyClient()
        .identify({ timestamp: 1 } as unknown as IdentifyRequest)
        .catch((e: unknown) => e),
    ]);
    for (const err of errors) {
      expect(err).toBeInstanceOf(ValidationError);
      expect(err).toMatchObject({ status: 400, code: 'validation' });
    }
    expect((errors[0] as ValidationError).serverMessage).toMatch(/^before: /);
    expect((errors[2] as ValidationError).serverMessage).toMatch(/^signals: /);
  });

  it('refuses the wrong kind of key up front without echoing it', () => {
    expect(() => createServerClient({ baseUrl: srv.url, secretKey: live })).toThrow(/secretKey must be a server secret key/);
    expect(() => createServerClient({ baseUrl: srv.url, secretKey: live })).not.toThrow(live);
    expect(() => createIdentifyClient({ baseUrl: srv.url, apiKey: secret })).toThrow(/apiKey must be a live or test key/);
    expect(() => createServerClient({ baseUrl: 'ftp://x', secretKey: secret })).toThrow(/baseUrl/);
    expect(() => createServerClient({ baseUrl: srv.url, secretKey: secret, retries: -1 })).toThrow(/retries/);
  });

  it('rejects an empty id instead of calling another route', async () => {
    await expect(server.getEvent('')).rejects.toThrow(/requestId must be a non-empty string/);
    await expect(server.getVisits('')).rejects.toThrow(/visitorId must be a non-empty string/);
    await expect(server.searchEvents({ linkedId: '' })).rejects.toThrow(/linkedId/);
  });
});
