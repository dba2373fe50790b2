// A change and its audit entry survive a crash between them together: the
// process is stopped (AuditLog.crashAfter) once the pending entry is written
// or once the change is, and the sweep settles the entry from what the
// changed document says. Real HTTP against the real database.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PENDING_GRACE_MS, type AuditLog } from '../../../server/audit/log.js';
import { defaultSweeps } from '../../../server/maintenance.js';
import type { Services } from '../../../server/services.js';
import { STAMP_FIELD, type AuditDoc } from '../../../server/store/audit.js';
import type { StoreOptions } from '../../../server/store/index.js';
import { signUp, type Customer } from '../../support/dashboard.js';
import { createHarness, type Harness } from '../../support/harness.js';
import { deviceValues, identifyBody } from '../../support/signals.js';

let h: Harness;
let audit: AuditLog;
let commands: Parameters<NonNullable<StoreOptions['onCommand']>>[0][] = [];
beforeAll(async () => {
  h = await createHarness(import.meta.filename, {}, (c) => commands.push(c));
  audit = (h.app.locals.services as Services).audit;
});
afterAll(async () => {
  audit.crashAfter = null;
  await h.close();
});

/** The maintenance loop's run of the settling sweep, at the clock's time. */
const sweep = () => defaultSweeps(h.store, h.config.retentionDays).auditPending!(new Date(h.clock.now()));

/** The actions the account's log shows, oldest first. */
async function shown(c: Customer): Promise<string[]> {
  const res = await c.agent.get(`/api/accounts/${c.accountId}/audit?limit=100`);
  expect(res.status).toBe(200);
  return (res.body.entries as { action: string }[]).map((e) => e.action).reverse();
}

const pendingOf = async (c: Customer) => (await h.store.audit.all()).filter((d) => d.accountId === c.accountId && d.pending);

/** A document's stamps as stored. */
async function stamps(collection: string, id: string): Promise<unknown> {
  const doc = await h.store.db.collection<{ _id: string }>(collection).findOne({ _id: id });
  return doc && (doc as Record<string, unknown>)[STAMP_FIELD];
}

interface Case {
  action: string;
  /** What the change needs first (made and recorded normally). */
  prepare?: (c: Customer) => Promise<void>;
  make: (c: Customer) => Promise<{ status: number }>;
  /** Whether the change is in the database. */
  made: (c: Customer) => Promise<boolean>;
}

let webhookId = '';
let keyId = '';
const post = (c: Customer, path: string, body: object = {}) => c.agent.post(path).set('origin', c.origin).send(body);
const del = (c: Customer, path: string) => c.agent.delete(path).set('origin', c.origin);

// One of each kind of write: a document updated, inserted, removed, and a change of several writes recorded with its last.
const CASES: Case[] = [
  {
    action: 'sealing.key_create',
    make: (c) => post(c, `/api/projects/${c.projectId}/sealing/key`),
    made: async (c) => Boolean((await h.store.projects.ofAccount(c.accountId, c.projectId))?.sealing),
  },
  {
    action: 'project.create',
    make: (c) => post(c, '/api/projects', { name: 'Shop' }),
    made: async (c) => (await h.store.projects.listForAccount(c.accountId)).length === 2,
  },
  {
    action: 'webhook.delete',
    prepare: async (c) => {
      webhookId = (await post(c, `/api/projects/${c.projectId}/webhooks`, { url: 'https://hooks.example.com/x' })).body.endpoint.id as string;
    },
    make: (c) => del(c, `/api/projects/${c.projectId}/webhooks/${webhookId}`),
    made: async () => (await h.store.webhooks.endpoint(webhookId)) === null,
  },
  {
    action: 'key.revoke',
    prepare: async (c) => {
      keyId = (await post(c, `/api/projects/${c.projectId}/keys`, { name: 'web', type: 'live' })).body.apiKey.id as string;
    },
    make: (c) => del(c, `/api/projects/${c.projectId}/keys/${keyId}`),
    made: async (c) => (await h.store.apiKeys.ofProject(c.projectId, keyId))?.status === 'revoked',
  },
  {
    action: 'list.entries',
    prepare: async (c) => {
      expect((await post(c, `/api/projects/${c.projectId}/lists`, { name: 'vips', kind: 'ip', description: '' })).status).toBe(201);
    },
    make: (c) => post(c, `/api/projects/${c.projectId}/lists/vips/entries`, { add: [{ value: '203.0.113.7' }] }),
    made: async (c) => (await h.store.lists.byName(c.projectId, 'vips'))?.entries === 1,
  },
];

describe('an audited change cut short by a crash', () => {
  for (const k of CASES) {
    it(`${k.action}: made, then the process dies: the sweep confirms its entry and takes the stamp out`, async () => {
      const c = await signUp(h);
      await k.prepare?.(c);
      const before = await shown(c);
      audit.crashAfter = 'change';
      expect((await k.make(c)).status).toBe(500);
      audit.crashAfter = null;
      expect(await k.made(c)).toBe(true);
      // Not shown while pending; the document carries the entry's id.
      expect(await shown(c)).toEqual(before);
      const [pending] = await pendingOf(c);
      expect(pending).toMatchObject({ action: k.action });
      const subject = pending!.pending!;
      if (!subject.removes) expect(await stamps(subject.collection, subject.id)).toEqual([pending!._id]);
      // Within the grace a change may still be under way: left alone.
      h.clock.advance(PENDING_GRACE_MS - 1);
      await sweep();
      expect(await pendingOf(c)).toHaveLength(1);
      h.clock.advance(1);
      await sweep();
      expect(await pendingOf(c)).toEqual([]);
      expect(await shown(c)).toEqual([...before, k.action]);
      if (!subject.removes) expect(await stamps(subject.collection, subject.id)).toBeUndefined();
    });

    it(`${k.action}: the entry written, then the process dies before the change: the sweep drops the entry`, async () => {
      const c = await signUp(h);
      await k.prepare?.(c);
      const before = await h.store.audit.all();
      audit.crashAfter = 'intent';
      expect((await k.make(c)).status).toBe(500);
      audit.crashAfter = null;
      expect(await k.made(c)).toBe(false);
      expect(await pendingOf(c)).toHaveLength(1);
      h.clock.advance(PENDING_GRACE_MS);
      await sweep();
      expect(await h.store.audit.all()).toEqual(before);
      expect(await k.made(c)).toBe(false);
    });
  }

  it('an event changed and then its visitor deleted: the entry is settled before the event goes, and names neither', async () => {
    const c = await signUp(h);
    const key = await c.key('test');
    const seen = await h
      .http()
      .post('/v1/identify')
      .set('x-api-key', key)
      .send(identifyBody(deviceValues(7007)));
    expect(seen.status).toBe(200);
    audit.crashAfter = 'change';
    expect((await c.agent.patch(`/api/events/${seen.body.requestId}`).set('origin', c.origin).send({ linkedId: 'order-9' })).status).toBe(500);
    audit.crashAfter = null;
    expect(await pendingOf(c)).toHaveLength(1);
    const secret = await c.key('secret');
    expect((await h.http().delete(`/v1/visitors/${seen.body.visitorId}`).set('authorization', `Bearer ${secret}`)).status).toBe(202);
    await (h.app.locals.services as Services).deletions.idle();
    expect(await pendingOf(c)).toEqual([]);
    const entry = (await c.agent.get(`/api/accounts/${c.accountId}/audit?action=event.update`)).body.entries as AuditDoc[];
    expect(entry).toMatchObject([{ target: { type: 'event', id: 'deleted' }, before: null, after: null }]);
    const log = JSON.stringify(await h.store.audit.all());
    expect(log).not.toContain(seen.body.requestId);
    expect(log).not.toContain('order-9');
  });
});

describe('settling an entry at once', () => {
  it('confirms it when a step after the write failed, drops it when the write was put back', async () => {
    const c = await signUp(h);
    const made = await audit
      .change(c.accountId, 'project.update', { target: { type: 'project', id: c.projectId }, after: { name: 'Renamed' } }, async (stamp) => {
        await h.store.projects.update(c.projectId, { name: 'Renamed' }, stamp);
        throw new Error('a later step failed');
      })
      .catch((err: Error) => err.message);
    expect(made).toBe('a later step failed');
    expect(await shown(c)).toEqual(['account.create', 'project.update']);
    expect(await stamps('projects', c.projectId)).toBeUndefined();

    const [owner] = await h.store.members.ofAccount(c.accountId);
    const undone = await audit
      .change(c.accountId, 'member.role', { target: { type: 'member', id: owner!.userId } }, async (stamp) => {
        await h.store.members.setRole(c.accountId, owner!.userId, 'viewer', stamp);
        await h.store.members.restoreRole(c.accountId, owner!.userId, 'owner', stamp);
        throw new Error('refused');
      })
      .catch((err: Error) => err.message);
    expect(undone).toBe('refused');
    expect(await shown(c)).toEqual(['account.create', 'project.update']);
    expect(await pendingOf(c)).toEqual([]);
    expect((await h.store.members.get(c.accountId, owner!.userId))?.role).toBe('owner');
  });

  it('keeps the stamp of another change of the same document under way', async () => {
    const c = await signUp(h);
    const rename = (name: string) =>
      audit.change(c.accountId, 'project.update', { after: { name } }, async (stamp) => {
        await h.store.projects.update(c.projectId, { name }, stamp);
        // The other change stamps the document before this one is confirmed.
        if (name === 'first') await rename('second');
        expect(await stamps('projects', c.projectId)).toHaveLength(name === 'first' ? 1 : 2);
      });
    await rename('first');
    expect(await stamps('projects', c.projectId)).toBeUndefined();
    expect(await shown(c)).toEqual(['account.create', 'project.update', 'project.update']);
  });

  it('puts back an entry the sweep dropped while its change was slower than the grace, whether the change then returns or throws', async () => {
    const c = await signUp(h);
    const projects = h.store.db.collection<{ _id: string; name: string }>('projects');
    for (const outcome of ['returns', 'throws'] as const) {
      const made = audit.change(c.accountId, 'project.update', { after: { name: outcome } }, async (stamp) => {
        // A store method's steps, with the sweep running between the entry and the write.
        await stamp.intend(projects, c.projectId);
        h.clock.advance(PENDING_GRACE_MS);
        await sweep();
        expect(await pendingOf(c)).toEqual([]);
        await projects.updateOne({ _id: c.projectId }, stamp.update({ $set: { name: outcome } }));
        stamp.landed();
        if (outcome === 'throws') throw new Error('a later step failed');
      });
      await (outcome === 'throws' ? expect(made).rejects.toThrow('a later step failed') : made);
    }
    expect(await shown(c)).toEqual(['account.create', 'project.update', 'project.update']);
    expect(await stamps('projects', c.projectId)).toBeUndefined();
  });

  it('costs two commands more than writing the entry afterwards: its confirmation and the stamp taken out', async () => {
    const c = await signUp(h);
    commands = [];
    expect((await c.agent.post(`/api/projects/${c.projectId}/sealing/key`).set('origin', c.origin).send({})).status).toBe(201);
    const writes = commands.filter((x) => ['insert', 'update', 'delete', 'findAndModify'].includes(x.name));
    expect(writes.map((x) => `${x.name} ${x.collection}`)).toEqual(['insert audit', 'update projects', 'update audit', 'update projects']);
  });
});
