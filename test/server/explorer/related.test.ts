// GET /api/projects/:projectId/visitors/:visitorId/related over HTTP on the
// real database (session cookie): the dashboard's form of
// GET /v1/visitors/:visitorId/related answers what the secret key's does,
// pages the same way, keeps to the project in the path, answers another
// account's project or visitor exactly like a missing one, refuses bad
// parameters, and needs the analyst role.
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RELATED_THRESHOLD } from '../../../contract/visitors.js';
import { joinAccount, signUp, type Customer } from '../../support/dashboard.js';
import { createHarness, type Harness } from '../../support/harness.js';
import { deviceValues, identifyBody, inEdge, inFirefox } from '../../support/signals.js';

type V = ReturnType<typeof deviceValues>;

let h: Harness;
let c: Customer;
let other: Customer;
let live: string;
let secret: string;
let secondProject: string;
/** One machine's Chrome, Firefox and Edge on its home network; another machine; another account's visitor. */
const ids: Record<'chrome' | 'firefox' | 'edge' | 'stranger' | 'theirs', string> = { chrome: '', firefox: '', edge: '', stranger: '', theirs: '' };

async function identify(v: V, ip: string, key: string): Promise<string> {
  h.clock.advance(60_000);
  const res = await request(h.app).post('/v1/identify').set('x-api-key', key).set('x-forwarded-for', ip).send(identifyBody(v));
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.visitorId as string;
}

const related = (query = '', visitorId = ids.chrome, projectId = c.projectId, who: Customer = c) =>
  who.agent.get(`/api/projects/${projectId}/visitors/${visitorId}/related${query}`);
const relatedIds = (res: request.Response) => (res.body.relatedVisitors as { visitorId: string }[]).map((r) => r.visitorId);

beforeAll(async () => {
  h = await createHarness(import.meta.filename, { PLANS: '{"free":{"rps":100000,"monthly":1000000}}', TRUST_PROXY: '127.0.0.1/32,::1' });
  c = await signUp(h);
  [live, secret] = [await c.key('live'), await c.key('secret')];
  secondProject = (await c.agent.post('/api/projects').set('origin', c.origin).send({ name: 'Second' })).body.id as string;
  other = await signUp(h);

  const chrome = deviceValues(7301);
  ids.chrome = await identify(chrome, '81.2.69.10', live);
  ids.firefox = await identify(inFirefox(chrome), '81.2.69.11', live);
  ids.edge = await identify(inEdge(chrome), '81.2.69.12', live);
  // Chrome again: last seen together with Edge after Firefox.
  expect(await identify(chrome, '81.2.69.10', live)).toBe(ids.chrome);
  // Another machine on another network: no relative.
  ids.stranger = await identify(deviceValues(7302), '2.125.160.10', live);
  ids.theirs = await identify(deviceValues(7303), '81.2.69.10', await other.key('live'));
});
afterAll(async () => {
  await h.close();
});

describe('GET /api/projects/:projectId/visitors/:visitorId/related', () => {
  it('answers what the secret key route answers: the same machine in other browsers, the most recently seen together first', async () => {
    const res = await related();
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toMatchObject({ visitorId: ids.chrome, threshold: RELATED_THRESHOLD });
    expect(relatedIds(res)).toEqual([ids.edge, ids.firefox]);
    expect(res.body).not.toHaveProperty('paginationKey');
    for (const r of res.body.relatedVisitors) {
      expect(r).toEqual({
        visitorId: expect.any(String),
        probability: expect.any(Number),
        evidence: expect.any(String),
        lastSeenTogetherAt: expect.any(Number),
      });
      expect(r.probability).toBeGreaterThanOrEqual(RELATED_THRESHOLD);
    }
    const withKey = await request(h.app).get(`/v1/visitors/${ids.chrome}/related`).set('authorization', `Bearer ${secret}`);
    expect(res.body).toEqual(withKey.body);
    // Both ways; a visitor without relatives has an empty list.
    expect(relatedIds(await related('', ids.firefox)).sort()).toEqual([ids.chrome, ids.edge].sort());
    expect(await related('', ids.stranger)).toMatchObject({ status: 200, body: { visitorId: ids.stranger, relatedVisitors: [] } });
  });

  it('pages with limit and paginationKey', async () => {
    const first = await related('?limit=1');
    expect(relatedIds(first)).toEqual([ids.edge]);
    expect(first.body.paginationKey).toEqual(expect.any(String));
    const next = await related(`?limit=1&paginationKey=${encodeURIComponent(first.body.paginationKey)}`);
    expect(next.status).toBe(200);
    expect(relatedIds(next)).toEqual([ids.firefox]);
    expect(next.body).not.toHaveProperty('paginationKey');
  });

  it('keeps to the project in the path: in the account’s other project, where it was never seen, the visitor has none', async () => {
    const res = await related('', ids.chrome, secondProject);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ visitorId: ids.chrome, threshold: RELATED_THRESHOLD, relatedVisitors: [] });
  });

  it("answers 404 for another account's project or visitor exactly as for a missing one", async () => {
    const theirProject = await related('', ids.chrome, other.projectId);
    expect(theirProject.status).toBe(404);
    expect(theirProject.body).toEqual({ error: 'Project not found', code: 'project_not_found' });
    expect((await related('', ids.chrome, 'prj_01JD0S3V6ZQ8Y0K2W3ZP4X5Y6Z')).body).toEqual(theirProject.body);
    // Their project with our visitor, and our project with their visitor.
    expect((await related('', ids.chrome, other.projectId, other)).body).toEqual({ error: 'Visitor not found', code: 'visitor_not_found' });
    const theirVisitor = await related('', ids.theirs);
    expect(theirVisitor.status).toBe(404);
    expect(theirVisitor.body).toEqual({ error: 'Visitor not found', code: 'visitor_not_found' });
    for (const id of ['iq_01JD0S3V6ZQ8Y0K2W3ZP4X5Y6Z', 'nope']) expect((await related('', id)).body, id).toEqual(theirVisitor.body);
    // Theirs, for them.
    expect((await related('', ids.theirs, other.projectId, other)).status).toBe(200);
  });

  it('refuses a bad limit, a paginationKey it did not give and unknown parameters with 400 naming them; 401 without a session', async () => {
    for (const [query, name] of [
      ['?limit=0', 'limit'],
      ['?limit=51', 'limit'],
      ['?limit=x', 'limit'],
      ['?paginationKey=nope', 'paginationKey'],
      [`?paginationKey=${'1'.repeat(65)}`, 'paginationKey'],
      ['?before=1', 'before'],
    ] as const) {
      const res = await related(query);
      expect(res.status, query).toBe(400);
      expect(res.body.code, query).toBe('validation_failed');
      expect(res.body.error, query).toMatch(name);
    }
    for (const res of [
      await request(h.app).get(`/api/projects/${c.projectId}/visitors/${ids.chrome}/related`),
      await request(h.app).get(`/api/projects/${c.projectId}/visitors/${ids.chrome}/related`).set('authorization', `Bearer ${secret}`),
    ]) {
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'Not signed in', code: 'not_signed_in' });
    }
  });

  it('needs the analyst role: a viewer of the account is refused, an analyst reads', async () => {
    const inAccount = async (role: 'viewer' | 'analyst') => {
      const member = await signUp(h);
      await joinAccount(c, member, role);
      const switched = await member.agent.put('/api/session/account').set('origin', member.origin).send({ accountId: c.accountId });
      expect(switched.status).toBe(200);
      return member;
    };
    const viewer = await inAccount('viewer');
    const refused = await related('', ids.chrome, c.projectId, viewer);
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('role_not_allowed');
    const analyst = await inAccount('analyst');
    const read = await related('', ids.chrome, c.projectId, analyst);
    expect(read.status).toBe(200);
    expect(relatedIds(read)).toEqual([ids.edge, ids.firefox]);
  });
});
