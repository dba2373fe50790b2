// DELETE /v1/visitors/:visitorId: a device's data is gone from every
// endpoint and from the database, the device comes back as a new visitor,
// the request is idempotent and scoped to the account, and a job stopped
// midway (a crash) is finished by the next process.
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServerClient, NotFoundError } from '../../../clients/node/index.js';
import { VisitorAliases } from '../../../server/visitors/aliases.js';
import { DeletionService } from '../../../server/deletion/service.js';
import { StoreIndex } from '../../../server/identification/storeIndex.js';
import { signLinkedId } from '@deviceid/client';
import { linkedKey } from '../../../server/store/eventIndex.js';
import type { Services } from '../../../server/services.js';
import { signUp, type Customer } from '../../support/dashboard.js';
import { createHarness, type Harness } from '../../support/harness.js';
import { listenApp, type Listening } from '../../support/httpServer.js';
import { deviceValues, identifyBody } from '../../support/signals.js';

let h: Harness;
let srv: Listening;
let c: Customer;
let live: string;
let secret: string;
let otherSecret: string;
let services: Services;

beforeAll(async () => {
  h = await createHarness(import.meta.filename, { PLANS: '{"free":{"rps":100000,"monthly":1000000}}' });
  srv = await listenApp(h.app);
  services = h.app.locals.services as Services;
  c = await signUp(h);
  live = await c.key('live');
  secret = await c.key('secret');
  otherSecret = await (await signUp(h)).key('secret');
});
afterAll(async () => {
  await srv.close();
  await h.close();
});

const identify = async (seed: number, extra: Record<string, unknown> = {}) => {
  h.clock.advance(60_000);
  const res = await request(h.app)
    .post('/v1/identify')
    .set('x-api-key', live)
    .send(identifyBody(deviceValues(seed), extra));
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as { requestId: string; visitorId: string; visitCount: number };
};
const bearer = (key = secret) => ({ authorization: `Bearer ${key}` });
const get = (path: string) => request(h.app).get(path).set(bearer()).set('x-api-key', secret);
const del = (visitorId: string, key = secret) => request(h.app).delete(`/v1/visitors/${visitorId}`).set(bearer(key));
const searched = async (query: string) => ((await get(`/v1/events?limit=100&${query}`)).body.events as { requestId: string }[]).map((e) => e.requestId);

/** Every document of every collection (but those in `skip`: by default the deletion jobs) that mentions one of `needles`. */
async function mentions(needles: string[], skip = ['deletions']): Promise<string[]> {
  const found: string[] = [];
  for (const { name } of await h.store.db.listCollections().toArray()) {
    if (skip.includes(name)) continue;
    for (const doc of await h.store.db.collection(name).find().toArray()) {
      const text = JSON.stringify(doc);
      for (const n of needles) if (text.includes(n)) found.push(`${name}: ${String(doc._id)} mentions ${n}`);
    }
  }
  return found;
}

describe('DELETE /v1/visitors/:visitorId', () => {
  it('deletes the device (with a visitor merged into it): nothing can be read afterwards, and it comes back as a new visitor', async () => {
    const a = [await identify(601, { linkedId: 'user-del' }), await identify(601), await identify(601, { linkedId: 'user-del' })];
    const b = [await identify(602), await identify(602)];
    const other = await identify(603, { linkedId: 'user-del' });
    const A = a[0]!.visitorId;
    const B = b[0]!.visitorId;
    expect(B).not.toBe(A);
    // B turns out to be the same device as A: merged, B is an alias of A.
    await new StoreIndex(h.store, c.accountId, h.clock.now()).merge(B, A, h.clock.now());
    expect((await get(`/v1/demo/visits/${B}`)).body).toMatchObject({ visitorId: A, totalVisits: 5 });
    const requestIds = [...a, ...b].map((r) => r.requestId);
    expect(await searched(`visitorId=${A}`)).toEqual([...requestIds].reverse());

    // Another account's secret key cannot delete it, nor learn it exists.
    expect((await del(A, otherSecret)).status).toBe(404);
    expect((await del('iq_01JD0S3V6ZQ8Y0K2W3ZP4X5Y6Z')).body).toEqual({ error: 'Visitor not found', code: 'visitor_not_found' });
    expect((await del('iq_01JD0S3V6ZQ8Y0K2W3ZP4X5Y6Z')).status).toBe(404);
    expect((await del('not-a-visitor')).status).toBe(400);
    expect((await request(h.app).delete(`/v1/visitors/${A}`).set('authorization', `Bearer ${live}`)).status).toBe(401);

    // Naming the alias deletes the whole device.
    const queued = await del(B);
    expect(queued.status).toBe(202);
    expect(queued.body).toEqual({ deletionId: expect.stringMatching(/^del_[0-9A-HJKMNP-TV-Z]{26}$/), visitorId: A, status: 'queued' });
    await services.deletions.idle();

    for (const id of requestIds) {
      expect((await get(`/v1/events/${id}`)).status, id).toBe(404);
      expect((await request(h.app).patch(`/v1/events/${id}`).set(bearer()).send({ suspect: true })).status, id).toBe(404);
    }
    for (const v of [A, B]) {
      expect((await get(`/v1/demo/visits/${v}`)).status).toBe(404);
      expect(await searched(`visitorId=${v}`)).toEqual([]);
    }
    expect(await searched('linkedId=user-del')).toEqual([other.requestId]);
    expect(await searched('')).toEqual([other.requestId]);
    // Nothing in the database names the device's visitors or events any more.
    expect(await mentions([A, B, ...requestIds])).toEqual([]);

    // Idempotent: the same deletion, done, by either id.
    for (const v of [A, B]) expect((await del(v)).body).toEqual({ ...queued.body, status: 'done' });

    // The device comes back: a new visitor, its first visit, no link to the old ones.
    const again = await identify(601);
    expect(again.visitorId).not.toBe(A);
    expect(again.visitorId).not.toBe(B);
    expect(again.visitCount).toBe(1);
    expect((await get(`/v1/demo/visits/${again.visitorId}`)).body).toMatchObject({ totalVisits: 1, mergedFrom: [] });
    // The unrelated device is untouched.
    expect((await get(`/v1/events/${other.requestId}`)).status).toBe(200);
  });

  it('is finished by the next process when a crash stopped it midway', async () => {
    const d = [await identify(611, { linkedId: 'crash' }), await identify(611)];
    const D = d[0]!.visitorId;
    services.deletions.paused = true;
    const queued = await del(D);
    services.deletions.paused = false;
    expect(queued.body.status).toBe('queued');

    // This process runs it and dies after scrubbing the identity index.
    services.deletions.crashAfter = 'identity';
    await expect(services.deletions.resume()).rejects.toThrow(/crash after identity/);
    services.deletions.crashAfter = null;
    expect((await del(D)).body.status).toBe('running');
    const job = await h.store.deletions.get(c.accountId, D);
    expect(job?.done).toEqual(['hide', 'identity']);

    // A new process finds the unfinished job and finishes it.
    const next = new DeletionService(h.store, new VisitorAliases(h.store), h.clock, services.audit);
    expect(await next.resume()).toBe(1);
    expect(await next.resume()).toBe(0);
    expect((await del(D)).body).toEqual({ ...queued.body, status: 'done' });
    for (const r of d) expect((await get(`/v1/events/${r.requestId}`)).status).toBe(404);
    expect(await mentions([D, ...d.map((r) => r.requestId)])).toEqual([]);
    expect((await identify(611)).visitorId).not.toBe(D);
  });

  it('leaves nothing of the linkedIds and tags the device was seen with: not in the audit log, not in the identity index', async () => {
    const victim = 'victim.person@example.com';
    const corrected = 'victim.person+2@example.com';
    const note = 'Victim Person, 12 Privacy Lane';
    const correctedNote = 'Victim Person, corrected by support';
    const family = 'family.account@example.com';
    // The shop's server vouches for the signed-in user's id: identification learns it.
    const key = (await c.agent.post(`/api/projects/${c.projectId}/linked-id-key`).set('origin', c.origin).send({})).body.key as string;
    const signedIn = (linkedId: string) => ({ linkedId, linkedIdProof: signLinkedId(key, linkedId, { now: h.clock.now() }) });
    const seen = [
      await identify(631, { ...signedIn(victim), tag: { note } }),
      await identify(631, { ...signedIn(victim), tag: { note } }),
      await identify(631, signedIn(family)),
    ];
    // Another device signs in to the family's account too: its entry stays, with that device alone.
    const relative = await identify(632, signedIn(family));
    const V = seen[0]!.visitorId;
    expect(seen.map((e) => e.visitorId)).toEqual([V, V, V]);
    // Corrected in the dashboard and with the secret key: the audit log records the values before and after.
    const byUser = await c.agent
      .patch(`/api/events/${seen[0]!.requestId}`)
      .set('origin', c.origin)
      .send({ linkedId: corrected, tag: { note: correctedNote } });
    expect(byUser.status, JSON.stringify(byUser.body)).toBe(200);
    const byKey = await request(h.app)
      .patch(`/v1/events/${seen[1]!.requestId}`)
      .set(bearer())
      .send({ linkedId: corrected, tag: { note: correctedNote } });
    expect(byKey.status, JSON.stringify(byKey.body)).toBe(200);
    const updates = (await h.store.audit.all()).filter((e) => e.action === 'event.update' && e.accountId === c.accountId);
    expect(updates.map((e) => JSON.parse(e.before!).linkedId)).toEqual([victim, victim]);

    // The identity index's linkedId entries, by the hashes the visitor holds (how they are computed is identification's own).
    const hashes = (await h.store.visitors.get(V))!.linked!;
    expect(hashes).toHaveLength(2);
    const entry = async (hash: string) =>
      (await h.store.db.collection('fingerprints').findOne({ _id: `${c.accountId}:l:${hash}` as never })) as { visitorIds: string[] } | null;
    for (const hash of hashes) expect((await entry(hash))?.visitorIds).toContain(V);
    const [familyHash] = (await h.store.visitors.get(relative.visitorId))!.linked!;
    expect(hashes).toContain(familyHash);

    const needles = [victim, corrected, note, correctedNote, ...hashes.filter((x) => x !== familyHash), linkedKey(victim), linkedKey(corrected)];
    expect((await mentions(needles, [])).length).toBeGreaterThan(0);
    expect((await del(V)).status).toBe(202);
    await services.deletions.idle();

    // Nothing in any collection, the deletion jobs and the audit log included, holds them.
    expect(await mentions(needles, [])).toEqual([]);
    expect(await mentions([V], [])).toEqual([`deletions: ${c.accountId}|${V} mentions ${V}`]);
    // The audit log keeps what happened, by whom and when.
    const kept = (await h.store.audit.all()).filter((e) => e.action === 'event.update' && e.accountId === c.accountId);
    expect(kept).toEqual(updates.map((e) => ({ ...e, target: { type: 'event', id: 'deleted' }, before: null, after: null })));
    // The family's other device keeps its entry.
    expect((await entry(familyHash!))?.visitorIds).toEqual([relative.visitorId]);
  });

  it('typed client: deleteVisitor', async () => {
    const client = createServerClient({ baseUrl: srv.url, secretKey: secret, validateResponses: true });
    const e = await identify(621);
    const first = await client.deleteVisitor(e.visitorId);
    expect(first).toEqual({ deletionId: expect.stringMatching(/^del_/), visitorId: e.visitorId, status: expect.stringMatching(/^(queued|running|done)$/) });
    await services.deletions.idle();
    expect(await client.deleteVisitor(e.visitorId)).toEqual({ ...first, status: 'done' });
    await expect(client.getEvent(e.requestId)).rejects.toBeInstanceOf(NotFoundError);
    await expect(client.deleteVisitor('iq_01JD0S3V6ZQ8Y0K2W3ZP4X5Y6Z')).rejects.toBeInstanceOf(NotFoundError);
  });
});
