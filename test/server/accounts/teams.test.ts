// Teams: members and roles (enforced by the auth middleware from the
// contract's metadata), invitations to an account, the session's current
// account, and the audit log. Real HTTP against the real database.
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppRoute } from '@ts-rest/core';
import { contract } from '../../../contract/index.js';
import { ROLES, type Role, type RoleRequirement, type RouteMeta } from '../../../contract/common.js';
import { migrate } from '../../../server/store/migrations.js';
import { createHarness, type Harness } from '../../support/harness.js';
import { startGrant } from '../../support/deviceflow.js';
import { deviceValues, identifyBody } from '../../support/signals.js';

let h: Harness;
let origin: string;
beforeAll(async () => {
  h = await createHarness(import.meta.filename, { PLAN_SELF_SERVICE: 'true' });
  origin = new URL(h.config.baseUrl).origin;
});
afterAll(async () => {
  await h.close();
});

type Agent = ReturnType<typeof request.agent>;
interface Person {
  agent: Agent;
  userId: string;
  email: string;
  password: string;
}

let n = 0;
const password = () => `tabby cat ${++n} purrs loudly ${n * 7919}`;

async function signup(email: string, invitation?: string): Promise<Person & { accountId: string }> {
  const agent = request.agent(h.app);
  const pw = password();
  const res = await agent
    .post('/api/auth/signup')
    .set('origin', origin)
    .send({ email, password: pw, ...(invitation ? { invitation } : {}) });
  if (res.status !== 201) throw new Error(`signup ${email}: ${res.status} ${JSON.stringify(res.body)}`);
  return { agent, userId: res.body.user.id, email, password: pw, accountId: res.body.account.id };
}

const tokenOf = (url: string) => new URL(url).searchParams.get('invite')!;

async function invite(by: Agent, accountId: string, email: string, role: Role): Promise<string> {
  const res = await by.post(`/api/accounts/${accountId}/invitations`).set('origin', origin).send({ email, role });
  if (res.status !== 201) throw new Error(`invite ${email}: ${res.status} ${JSON.stringify(res.body)}`);
  return tokenOf(res.body.url);
}

/** A new user who joins `accountId` with `role` by signing up with an invitation. */
async function member(owner: Agent, accountId: string, role: Role, email = `${role}${++n}@team.example`): Promise<Person> {
  const p = await signup(email, await invite(owner, accountId, email, role));
  expect(p.accountId).toBe(accountId);
  return p;
}

// ---- The roles table (docs/accounts.md). The matrix checks the server answers exactly this. ----
const ROLE_TABLE: Record<string, RoleRequirement> = {
  // account
  logout: 'signedIn',
  getAccount: 'signedIn',
  getUsage: 'viewer',
  listPlans: 'signedIn',
  setPlan: 'owner',
  listProjects: 'viewer',
  createProject: 'admin',
  updateProject: 'admin',
  listKeys: 'admin',
  createKey: 'admin',
  revokeKey: 'admin',
  // events
  getAccountEvent: 'analyst',
  deleteAccountVisitor: 'admin',
  updateAccountEvent: 'analyst',
  listProjectEvents: 'viewer',
  getProjectHourly: 'viewer',
  getVisitorTimeline: 'analyst',
  getProjectRelatedVisitors: 'analyst',
  // device flow consent
  getGrant: 'signedIn',
  listGrantAccounts: 'signedIn',
  authorizeGrant: 'admin',
  denyGrant: 'signedIn',
  // project settings
  getSealing: 'admin',
  createSealingKey: 'admin',
  disableSealing: 'admin',
  listWebhooks: 'admin',
  createWebhook: 'admin',
  rotateWebhookSecret: 'admin',
  deleteWebhook: 'admin',
  listDeliveries: 'admin',
  redeliver: 'admin',
  getProxy: 'admin',
  createProxySecret: 'admin',
  revokeProxySecret: 'admin',
  getProxyTraffic: 'admin',
  getLinkedIdKey: 'admin',
  createLinkedIdKey: 'admin',
  revokeLinkedIdKey: 'admin',
  // decisions: viewers read, analysts try rules and label, admins edit rules and lists
  getRuleset: 'viewer',
  putRuleset: 'admin',
  getRulesetVersion: 'viewer',
  previewRule: 'analyst',
  getRuleStats: 'viewer',
  listLists: 'viewer',
  createList: 'admin',
  getList: 'viewer',
  updateList: 'admin',
  deleteList: 'admin',
  listEntries: 'viewer',
  changeListEntries: 'admin',
  listReviews: 'viewer',
  labelEvent: 'analyst',
  exportLabels: 'analyst',
  // teams
  listMyAccounts: 'signedIn',
  switchAccount: 'signedIn',
  acceptInvitation: 'signedIn',
  listMembers: 'admin',
  changeRole: 'owner',
  removeMember: 'owner',
  createMemberInvitation: 'admin',
  listMemberInvitations: 'admin',
  revokeMemberInvitation: 'admin',
  listAudit: 'admin',
  // instance administration (also: the administrator's account only)
  createInvitation: 'admin',
  listInvitations: 'admin',
  revokeInvitation: 'admin',
  listAccounts: 'admin',
  setAccountPlan: 'admin',
};

/** Every route of the contract with its name. */
function routes(): { name: string; route: AppRoute; meta: RouteMeta }[] {
  const out: { name: string; route: AppRoute; meta: RouteMeta }[] = [];
  for (const area of Object.values(contract)) {
    for (const [name, route] of Object.entries(area as Record<string, AppRoute>)) out.push({ name, route, meta: route.metadata as RouteMeta });
  }
  return out;
}
const sessionRoutes = () => routes().filter((r) => r.meta.auth === 'session' || r.meta.auth === 'admin');

const allows = (role: Role, required: RoleRequirement) => required === 'signedIn' || ROLES.indexOf(role) <= ROLES.indexOf(required);

describe('roles on every session route', () => {
  it('0 session routes without a declared role; the declared roles are the roles table', () => {
    const declared = sessionRoutes();
    expect(declared.filter((r) => r.meta.role === undefined).map((r) => r.name)).toEqual([]);
    expect(Object.fromEntries(declared.map((r) => [r.name, r.meta.role]))).toEqual(ROLE_TABLE);
    // No key or public route carries a role.
    expect(routes().filter((r) => r.meta.auth !== 'session' && r.meta.auth !== 'admin' && r.meta.role !== undefined)).toEqual([]);
  });

  it('every session route × every role, a removed member and a member of another account answer what the table says', async () => {
    // The first sign-up administers the instance: account A is the administrator's, so admin routes are reachable by its members.
    const owner = await signup('owner@a.example');
    const A = owner.accountId;
    const people: Record<Role, Person> = {
      owner,
      admin: await member(owner.agent, A, 'admin'),
      analyst: await member(owner.agent, A, 'analyst'),
      viewer: await member(owner.agent, A, 'viewer'),
    };
    const removed = await member(owner.agent, A, 'admin');
    expect((await owner.agent.delete(`/api/accounts/${A}/members/${removed.userId}`).set('origin', origin)).status).toBe(200);
    const other = await signup('owner@b.example');
    const projectA = (await owner.agent.get('/api/projects')).body.projects[0].id as string;

    const params: Record<string, string> = {
      accountId: A,
      projectId: projectA,
      keyId: 'key_01JD0S3V6ZQ8Y0K2W3ZP4X5Y6Z',
      endpointId: 'whe_01JD0S3V6ZQ8Y0K2W3ZP4X5Y6Z',
      requestId: 'req_01JD0S3V6ZQ8Y0K2W3ZP4X5Y6Z',
      visitorId: 'iq_01JD0S3V6ZQ8Y0K2W3ZP4X5Y6Z',
      userCode: 'BCDF-GHJK',
      userId: 'usr_01JD0S3V6ZQ8Y0K2W3ZP4X5Y6Z',
      invitationId: 'minv_01JD0S3V6ZQ8Y0K2W3ZP4X5Y6Z',
      name: 'blocked-ips',
      version: '1',
    };
    const pathOf = (route: AppRoute) => route.path.replace(/:(\w+)/g, (_m, p: string) => params[p]!);
    /**
     * Reads run for real. A change is sent without Origin: the middleware
     * checks the role before CSRF, so an allowed role is refused as
     * cross-site (403 cross_site_request) and nothing changes, while a role
     * below the route's is refused for its role.
     */
    // Valid bodies, for the calls that pass CSRF (another account's member on A's project: 404 before anything changes).
    const bodies: Record<string, unknown> = {
      createKey: { name: 'k', type: 'live' },
      createWebhook: { url: 'https://hooks.example.com/h' },
      putRuleset: { rules: [] },
      previewRule: { expression: 'true' },
      createList: { name: 'blocked-ips', kind: 'ip' },
      updateList: { description: '' },
      changeListEntries: { add: [{ value: '192.0.2.1' }] },
      labelEvent: { verdict: 'fraud' },
    };
    const call = (agent: Agent, name: string, route: AppRoute, withOrigin = false) => {
      const path = pathOf(route);
      if (route.method === 'GET') return agent.get(path);
      const req = agent[route.method.toLowerCase() as 'post' | 'put' | 'patch' | 'delete'](path).set('content-type', 'application/json');
      if (withOrigin) req.set('origin', origin);
      return route.method === 'DELETE' ? req : req.send(JSON.stringify(bodies[name] ?? {}));
    };

    const wrong: string[] = [];
    const check = (who: string, name: string, res: request.Response, ok: (r: request.Response) => boolean) => {
      if (!ok(res)) wrong.push(`${who} ${name}: ${res.status} ${JSON.stringify(res.body)}`);
    };
    const passedAuth = (route: AppRoute) => (r: request.Response) =>
      route.method === 'GET'
        ? ![401, 403].includes(r.status) && !['account_not_found'].includes(r.body?.code)
        : r.status === 403 && r.body.code === 'cross_site_request';

    for (const { name, route, meta } of sessionRoutes()) {
      const required = ROLE_TABLE[name]!;
      for (const role of ROLES) {
        const res = await call(people[role].agent, name, route);
        if (allows(role, required)) check(role, name, res, passedAuth(route));
        else check(role, name, res, (r) => r.status === 403 && r.body.code === 'role_not_allowed');
      }
      // Removed from A: the session in A ended.
      check('removed', name, await call(removed.agent, name, route), (r) => r.status === 401 && r.body.code === 'not_signed_in');

      // Owner of B: A's account is not theirs (404), nor are A's projects (404, with Origin: nothing of B changes either);
      // administration is the administrator's account's; anything else acts on B.
      const res = await call(other.agent, name, route, route.path.includes(':projectId') || route.path.includes(':accountId'));
      if (meta.auth === 'admin') check('other', name, res, (r) => r.status === 403 && r.body.code === 'admin_only');
      else if (route.path.includes(':accountId')) check('other', name, res, (r) => r.status === 404 && r.body.code === 'account_not_found');
      else if (route.path.includes(':projectId')) {
        // A's project, or a thing under it, is not found for them (the endpoint is looked up with the account).
        check('other', name, res, (r) => r.status === 404 && ['project_not_found', 'webhook_endpoint_not_found'].includes(r.body.code));
      } else check('other', name, res, passedAuth(route));
    }
    expect(wrong).toEqual([]);
  }, 120_000);
});

describe('members, roles and invitations', () => {
  it('invites by email with a role: single use, for that email, expiring, withdrawable; accepting signs up, signs in or joins while signed in', async () => {
    const owner = await signup('founder@c.example');
    const C = owner.accountId;

    // Sign-up with the invitation joins C (no account of their own) with its role.
    const token = await invite(owner.agent, C, 'dev@c.example', 'analyst');
    expect(token).toMatch(/^dij_[0-9A-Z]{26}_[\w-]{32}$/);
    const wrongEmail = await request(h.app)
      .post('/api/auth/signup')
      .set('origin', origin)
      .send({ email: 'else@c.example', password: password(), invitation: token });
    expect(wrongEmail.status).toBe(403);
    expect(wrongEmail.body.error).toBe('This invitation is for another email address');
    const dev = await signup('dev@c.example', token);
    expect((await dev.agent.get('/api/account')).body).toMatchObject({ account: { id: C }, role: 'analyst' });
    expect((await dev.agent.get('/api/session/accounts')).body.accounts).toEqual([
      { id: C, plan: 'free', role: 'analyst', current: true, joinedAt: expect.any(String) },
    ]);
    // Used once.
    const again = await request(h.app)
      .post('/api/auth/login')
      .set('origin', origin)
      .send({ email: 'dev@c.example', password: dev.password, invitation: token });
    expect(again.status).toBe(403);
    expect(again.body).toEqual({ error: 'This invitation has already been used', code: 'invitation_used' });
    // Joining twice: no invitation is made for someone already a member.
    const twice = await owner.agent.post(`/api/accounts/${C}/invitations`).set('origin', origin).send({ email: 'dev@c.example', role: 'viewer' });
    expect(twice.status).toBe(409);
    expect(twice.body).toEqual({ error: 'Already a member of this account', code: 'already_member' });

    // Simultaneous acceptances of one invitation by its addressee: one joins.
    const solo = await signup('solo@d.example');
    const once = await invite(owner.agent, C, 'solo@d.example', 'viewer');
    const accepts = await Promise.all(
      Array.from({ length: 5 }, () => solo.agent.post('/api/invitations/accept').set('origin', origin).send({ invitation: once })),
    );
    expect(accepts.filter((r) => r.status === 200)).toHaveLength(1);
    expect(accepts.filter((r) => r.status !== 200).every((r) => ['invitation_used', 'already_member'].includes(r.body.code))).toBe(true);
    expect(await h.store.db.collection('members').countDocuments({ accountId: C, userId: solo.userId })).toBe(1);

    // A tampered secret, an unknown id: not valid; the stored document holds no token.
    const tampered = token.slice(0, -1) + (token.endsWith('A') ? 'B' : 'A');
    const someone = await signup('someone@d.example');
    for (const bad of [tampered, 'dij_01JD0S3V6ZQ8Y0K2W3ZP4X5Y6Z_' + 'x'.repeat(32), 'dij_nonsense']) {
      const r = await someone.agent.post('/api/invitations/accept').set('origin', origin).send({ invitation: bad });
      expect(r.status).toBe(403);
      expect(r.body).toEqual({ error: 'This invitation is not valid', code: 'signup_not_allowed' });
    }
    expect(JSON.stringify(await h.store.db.collection('memberInvitations').find().toArray())).not.toContain(token.slice(-32));

    // Sign-in with an invitation joins, and the session starts there.
    const t2 = await invite(owner.agent, C, 'someone@d.example', 'viewer');
    const login = await request
      .agent(h.app)
      .post('/api/auth/login')
      .set('origin', origin)
      .send({ email: 'someone@d.example', password: someone.password, invitation: t2 });
    expect(login.status).toBe(200);
    expect(login.body).toMatchObject({ account: { id: C }, role: 'viewer' });

    // While signed in: accept, then switch between accounts.
    const t3 = await invite(owner.agent, C, 'third@e.example', 'admin');
    const third = await signup('third@e.example');
    const accepted = await third.agent.post('/api/invitations/accept').set('origin', origin).send({ invitation: t3 });
    expect(accepted.status).toBe(200);
    expect(accepted.body).toMatchObject({ account: { id: C }, role: 'admin' });
    expect((await third.agent.get('/api/projects')).body.projects[0].id).toBe((await owner.agent.get('/api/projects')).body.projects[0].id);
    const own = await third.agent.put('/api/session/account').set('origin', origin).send({ accountId: third.accountId });
    expect(own.body).toMatchObject({ account: { id: third.accountId }, role: 'owner' });
    const notMine = await third.agent.put('/api/session/account').set('origin', origin).send({ accountId: someone.accountId });
    expect(notMine.status).toBe(404);
    // The next sign-in starts where they last worked.
    const relogin = await request.agent(h.app).post('/api/auth/login').set('origin', origin).send({ email: 'third@e.example', password: third.password });
    expect(relogin.body.account.id).toBe(third.accountId);

    // Expiry (7 days) and withdrawal.
    const late = await invite(owner.agent, C, 'late@c.example', 'viewer');
    h.clock.advance(7 * 24 * 3600_000);
    const expired = await request(h.app)
      .post('/api/auth/signup')
      .set('origin', origin)
      .send({ email: 'late@c.example', password: password(), invitation: late });
    expect(expired.body.error).toBe('This invitation has expired');
    const withdrawn = await owner.agent.post(`/api/accounts/${C}/invitations`).set('origin', origin).send({ email: 'w@c.example', role: 'viewer' });
    const del = await owner.agent.delete(`/api/accounts/${C}/invitations/${withdrawn.body.invitation.id}`).set('origin', origin);
    expect(del.body.invitation.status).toBe('revoked');
    const w = await request(h.app)
      .post('/api/auth/signup')
      .set('origin', origin)
      .send({ email: 'w@c.example', password: password(), invitation: tokenOf(withdrawn.body.url) });
    expect(w.body.error).toBe('This invitation has been withdrawn');
    const list = (await owner.agent.get(`/api/accounts/${C}/invitations`)).body.invitations.map(
      (i: { email: string; status: string }) => `${i.email} ${i.status}`,
    );
    expect(list).toEqual([
      'w@c.example revoked',
      'late@c.example expired',
      'third@e.example used',
      'someone@d.example used',
      'solo@d.example used',
      'dev@c.example used',
    ]);

    // Simultaneous sign-ups with one invitation: one user joins, no other is left behind.
    const race = await invite(owner.agent, C, 'race@c.example', 'viewer');
    const results = await Promise.all(
      Array.from({ length: 5 }, () =>
        request(h.app).post('/api/auth/signup').set('origin', origin).send({ email: 'race@c.example', password: password(), invitation: race }),
      ),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    expect(results.filter((r) => r.status !== 201).every((r) => r.status === 409 || r.status === 403)).toBe(true);
    expect(await h.store.db.collection('users').countDocuments({ email: 'race@c.example' })).toBe(1);
    expect(await h.store.db.collection('members').countDocuments({ accountId: C })).toBe(6);

    // An admin may not invite an owner.
    const byAdmin = await third.agent.put('/api/session/account').set('origin', origin).send({ accountId: C });
    expect(byAdmin.status).toBe(200);
    const ownerInvite = await third.agent.post(`/api/accounts/${C}/invitations`).set('origin', origin).send({ email: 'boss@c.example', role: 'owner' });
    expect(ownerInvite.status).toBe(403);
    expect(ownerInvite.body.code).toBe('role_not_allowed');
  });

  it('invites no member, not even oneself; removing a member withdraws the pending invitations to their email', async () => {
    const owner = await signup('founder@r.example');
    const R = owner.accountId;
    const admin = await member(owner.agent, R, 'admin');
    const self = await admin.agent.post(`/api/accounts/${R}/invitations`).set('origin', origin).send({ email: admin.email, role: 'admin' });
    expect(self.status).toBe(409);
    expect(self.body).toEqual({ error: 'Already a member of this account', code: 'already_member' });

    // Invited twice, joined with the second: the first stays pending while they are a member.
    const first = await invite(owner.agent, R, 'twice@r.example', 'admin');
    const twice = await member(owner.agent, R, 'viewer', 'twice@r.example');
    await invite(owner.agent, R, 'other@r.example', 'viewer');
    expect((await owner.agent.delete(`/api/accounts/${R}/members/${twice.userId}`).set('origin', origin)).status).toBe(200);
    const back = await request(h.app).post('/api/auth/login').set('origin', origin).send({ email: twice.email, password: twice.password, invitation: first });
    expect(back.status).toBe(403);
    expect(back.body).toEqual({ error: 'This invitation has been withdrawn', code: 'signup_not_allowed' });
    const statuses = (await owner.agent.get(`/api/accounts/${R}/invitations`)).body.invitations.map(
      (i: { email: string; status: string }) => `${i.email} ${i.status}`,
    );
    expect(statuses).toEqual(['other@r.example pending', 'twice@r.example used', 'twice@r.example revoked', `${admin.email} used`]);
    const log = (await owner.agent.get(`/api/accounts/${R}/audit`)).body.entries.map((e: { action: string }) => e.action);
    expect(log.slice(0, 2)).toEqual(['member.invitation_revoke', 'member.remove']);
    // Invited again after the removal: they may come back.
    expect((await owner.agent.post(`/api/accounts/${R}/invitations`).set('origin', origin).send({ email: twice.email, role: 'viewer' })).status).toBe(201);
  });

  it('changes roles and removes members, keeping an owner; a removed member’s sessions in the account end at once', async () => {
    const owner = await signup('founder@f.example');
    const F = owner.accountId;
    const admin = await member(owner.agent, F, 'admin');
    const path = (p: Person) => `/api/accounts/${F}/members/${p.userId}`;

    const last = await owner.agent.patch(path(owner)).set('origin', origin).send({ role: 'admin' });
    expect(last.status).toBe(409);
    expect(last.body).toEqual({ error: 'An account must keep at least one owner', code: 'last_owner' });
    expect((await owner.agent.delete(path(owner)).set('origin', origin)).status).toBe(409);

    // Lowering a role holds on the very next request.
    expect((await admin.agent.get(`/api/projects/${(await owner.agent.get('/api/projects')).body.projects[0].id}/keys`)).status).toBe(200);
    const lowered = await owner.agent.patch(path(admin)).set('origin', origin).send({ role: 'viewer' });
    expect(lowered.body).toMatchObject({ userId: admin.userId, role: 'viewer', email: admin.email });
    expect((await admin.agent.get('/api/account/usage')).status).toBe(200);
    expect((await admin.agent.get(`/api/accounts/${F}/members`)).status).toBe(403);

    // Two owners: one may step down, then the other is the last.
    await owner.agent.patch(path(admin)).set('origin', origin).send({ role: 'owner' });
    expect((await admin.agent.patch(path(owner)).set('origin', origin).send({ role: 'analyst' })).status).toBe(200);
    expect((await admin.agent.delete(path(admin)).set('origin', origin)).status).toBe(409);
    await admin.agent.patch(path(owner)).set('origin', origin).send({ role: 'owner' });

    // A membership gone while a session in it remains (another process between removing the one and ending the other):
    // the next request answers 401 and ends the session, also on a route naming the account.
    const brief = await member(owner.agent, F, 'admin');
    await h.store.db.collection('members').deleteOne({ _id: `${F}|${brief.userId}` as never });
    expect((await brief.agent.get(`/api/accounts/${F}/members`)).status).toBe(401);
    expect(await h.store.db.collection('sessions').countDocuments({ userId: brief.userId })).toBe(0);

    // Removal: the removed member's session in F answers 401 and is gone; with no account left they cannot sign in.
    const sessionsBefore = await h.store.db.collection('sessions').countDocuments({ userId: admin.userId, accountId: F });
    expect(sessionsBefore).toBe(1);
    const removed = await owner.agent.delete(path(admin)).set('origin', origin);
    expect(removed.body.member).toMatchObject({ userId: admin.userId, role: 'owner' });
    expect(await h.store.db.collection('sessions').countDocuments({ userId: admin.userId, accountId: F })).toBe(0);
    expect((await admin.agent.get('/api/account')).status).toBe(401);
    const noAccount = await request(h.app).post('/api/auth/login').set('origin', origin).send({ email: admin.email, password: admin.password });
    expect(noAccount.status).toBe(403);
    expect(noAccount.body.code).toBe('no_account');
    expect((await owner.agent.delete(path(admin)).set('origin', origin)).status).toBe(404);
    expect((await owner.agent.get(`/api/accounts/${F}/members`)).body.members.map((m: { email: string }) => m.email)).toEqual([owner.email]);
  });

  it('the device flow issues a key only for a member whose role may create keys, checked again when the tool polls', async () => {
    const owner = await signup('founder@g.example');
    const G = owner.accountId;
    const project = (await owner.agent.get('/api/projects')).body.projects[0].id;
    const analyst = await member(owner.agent, G, 'analyst');
    const admin = await member(owner.agent, G, 'admin');

    const g1 = await startGrant(h);
    const refused = await analyst.agent.post(`/api/cli/grants/${g1.user_code}/authorize`).set('origin', origin).send({ projectId: project });
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('role_not_allowed');

    // Approved by an admin who is an analyst by the time the tool polls: no key.
    const approved = await admin.agent.post(`/api/cli/grants/${g1.user_code}/authorize`).set('origin', origin).send({ projectId: project });
    expect(approved.status).toBe(200);
    await owner.agent.patch(`/api/accounts/${G}/members/${admin.userId}`).set('origin', origin).send({ role: 'analyst' });
    const poll = await h.http().post('/api/cli/token').send({ device_code: g1.device_code });
    expect(poll.status).toBe(410);
    expect(poll.body.status).toBe('denied');
    expect((await owner.agent.get(`/api/projects/${project}/keys`)).body.keys).toEqual([]);
  });
});

describe('the audit log', () => {
  it('records every change with who, when, where and what; nothing for refused changes; never a secret', async () => {
    const plaintexts: string[] = [];
    const owner = await signup('founder@h.example');
    plaintexts.push(owner.password);
    const H = owner.accountId;
    const o = (r: request.Test) => r.set('origin', origin).set('user-agent', 'audit-test/1.0');
    const project = (await owner.agent.get('/api/projects')).body.projects[0].id as string;

    const t = await invite(owner.agent, H, 'ana@h.example', 'analyst');
    plaintexts.push(t);
    const ana = await signup('ana@h.example', t);
    plaintexts.push(ana.password);
    await o(owner.agent.patch(`/api/accounts/${H}/members/${ana.userId}`)).send({ role: 'admin' });
    const spare = await o(owner.agent.post(`/api/accounts/${H}/invitations`)).send({ email: 'x@h.example', role: 'viewer' });
    plaintexts.push(tokenOf(spare.body.url));
    await o(owner.agent.delete(`/api/accounts/${H}/invitations/${spare.body.invitation.id}`));
    await o(owner.agent.put('/api/account/plan')).send({ plan: 'builder' });
    const created = await o(owner.agent.post('/api/projects')).send({ name: 'Shop' });
    await o(owner.agent.patch(`/api/projects/${created.body.id}`)).send({ allowedDomains: ['shop.example.com'] });
    const live = await o(owner.agent.post(`/api/projects/${project}/keys`)).send({ name: 'web', type: 'live' });
    const secret = await o(owner.agent.post(`/api/projects/${project}/keys`)).send({ name: 'backend', type: 'secret' });
    plaintexts.push(live.body.key, secret.body.key);
    await o(owner.agent.delete(`/api/projects/${project}/keys/${live.body.apiKey.id}`));
    const hook = await o(owner.agent.post(`/api/projects/${project}/webhooks`)).send({ url: 'https://hooks.example.com/x' });
    const rotated = await o(owner.agent.post(`/api/projects/${project}/webhooks/${hook.body.endpoint.id}/secret`)).send({});
    plaintexts.push(hook.body.secret, rotated.body.secret);
    await o(owner.agent.delete(`/api/projects/${project}/webhooks/${hook.body.endpoint.id}`));
    const sealing = await o(owner.agent.post(`/api/projects/${project}/sealing/key`)).send({});
    plaintexts.push(sealing.body.key);
    await o(owner.agent.delete(`/api/projects/${project}/sealing`));
    const proxy = await o(owner.agent.post(`/api/projects/${project}/proxy/secret`)).send({});
    plaintexts.push(proxy.body.secret);
    await o(owner.agent.delete(`/api/projects/${project}/proxy/secret`));
    // An event: marked suspect in the dashboard, corrected with the secret key; then its visitor deleted.
    const testKey = await o(owner.agent.post(`/api/projects/${project}/keys`)).send({ name: 'demo', type: 'test' });
    plaintexts.push(testKey.body.key);
    const seen = await h
      .http()
      .post('/v1/identify')
      .set('x-api-key', testKey.body.key)
      .send(identifyBody(deviceValues(4242)));
    expect(seen.status).toBe(200);
    expect((await o(owner.agent.patch(`/api/events/${seen.body.requestId}`)).send({ suspect: true })).status).toBe(200);
    const bearer = `Bearer ${secret.body.key}`;
    expect((await h.http().patch(`/v1/events/${seen.body.requestId}`).set('authorization', bearer).send({ linkedId: 'order-7' })).status).toBe(200);
    expect((await h.http().patch('/v1/events/req_01JD0S3V6ZQ8Y0K2W3ZP4X5Y6Z').set('authorization', bearer).send({ suspect: true })).status).toBe(404);
    const [byKey, byUser] = (await owner.agent.get(`/api/accounts/${H}/audit?action=event.update`)).body.entries as Array<Record<string, any>>;
    expect(byUser).toMatchObject({ actor: { type: 'user', id: owner.userId }, before: { suspect: false }, after: { suspect: true } });
    expect(byKey).toMatchObject({ actor: { type: 'key', id: secret.body.apiKey.id }, before: { linkedId: null }, after: { linkedId: 'order-7' } });
    expect((await h.http().delete(`/v1/visitors/${seen.body.visitorId}`).set('authorization', bearer)).status).toBe(202);
    // The device flow.
    const g = await startGrant(h);
    await o(owner.agent.post(`/api/cli/grants/${g.user_code}/authorize`)).send({ projectId: project });
    const cliKey = (await h.http().post('/api/cli/token').send({ device_code: g.device_code })).body.api_key as string;
    plaintexts.push(cliKey, g.device_code);
    const g2 = await startGrant(h);
    await o(owner.agent.post(`/api/cli/grants/${g2.user_code}/deny`)).send({});
    // Sign-in: a failure, then a success.
    expect((await request(h.app).post('/api/auth/login').set('origin', origin).send({ email: owner.email, password: 'not the password at all' })).status).toBe(
      401,
    );
    plaintexts.push('not the password at all');
    const again = await request(h.app).post('/api/auth/login').set('origin', origin).send({ email: owner.email, password: owner.password });
    plaintexts.push(/deviceid_session=([^;]+)/.exec(again.headers['set-cookie']![0]!)![1]!);
    await o(owner.agent.delete(`/api/accounts/${H}/members/${ana.userId}`));

    // Refused changes: none of these may leave an entry.
    const before = await h.store.audit.all();
    await o(owner.agent.patch(`/api/accounts/${H}/members/${owner.userId}`)).send({ role: 'viewer' }); // last owner
    await o(owner.agent.delete(`/api/projects/${project}/keys/key_01JD0S3V6ZQ8Y0K2W3ZP4X5Y6Z`)); // unknown key
    await o(owner.agent.delete(`/api/projects/${project}/keys/${live.body.apiKey.id}`)); // already revoked
    await o(owner.agent.delete(`/api/projects/${project}/sealing`)); // already off
    await o(owner.agent.patch(`/api/projects/${created.body.id}`)).send({ allowedDomains: ['shop.example.com'] }); // no change
    await owner.agent.post('/api/projects').send({ name: 'cross-site' }); // CSRF
    expect(await h.store.audit.all()).toEqual(before);

    const page = await owner.agent.get(`/api/accounts/${H}/audit?limit=100`);
    expect(page.status).toBe(200);
    const actions = (page.body.entries as { action: string }[]).map((e) => e.action).reverse();
    expect(actions).toEqual([
      'account.create',
      'member.invite',
      'member.join',
      'member.role',
      'member.invite',
      'member.invitation_revoke',
      'plan.change',
      'project.create',
      'project.update',
      'key.create',
      'key.create',
      'key.revoke',
      'webhook.create',
      'webhook.rotate_secret',
      'webhook.delete',
      'sealing.key_create',
      'sealing.disable',
      'proxy.secret_create',
      'proxy.secret_revoke',
      'key.create',
      'event.update',
      'event.update',
      'visitor.delete',
      'deviceflow.authorize',
      'key.create',
      'deviceflow.deny',
      'auth.login_failed',
      'auth.login',
      'member.remove',
    ]);
    const entries = page.body.entries as Array<Record<string, any>>;
    const byAction = (a: string) => entries.find((e) => e.action === a)!;
    // The first invitation (the newest-first list ends with it).
    expect(entries.filter((e) => e.action === 'member.invite').at(-1)).toMatchObject({
      target: { type: 'invitation' },
      after: { email: 'ana@h.example', role: 'analyst' },
    });
    expect(byAction('member.join')).toMatchObject({
      actor: { type: 'user', id: ana.userId, label: 'ana@h.example' },
      target: { type: 'member', id: ana.userId },
      after: { email: 'ana@h.example', role: 'analyst', invitation: expect.stringMatching(/^minv_/) },
    });
    expect(byAction('member.role')).toMatchObject({
      actor: { type: 'user', id: owner.userId, label: owner.email },
      target: { type: 'member', id: ana.userId },
      before: { role: 'analyst' },
      after: { role: 'admin' },
      userAgent: 'audit-test/1.0',
      ip: expect.stringMatching(/127\.0\.0\.1/),
      at: new Date(h.clock.now()).toISOString(),
    });
    expect(byAction('project.update')).toMatchObject({ before: { allowedDomains: [] }, after: { allowedDomains: ['shop.example.com'] } });
    expect(byAction('plan.change')).toMatchObject({ before: { plan: 'free' }, after: { plan: 'builder' } });
    expect(byAction('auth.login_failed')).toMatchObject({ actor: { type: 'anonymous' }, after: { email: owner.email } });
    expect(byAction('deviceflow.deny').actor.id).toBe(owner.userId);
    expect(entries.filter((e) => e.action === 'key.create')[0]).toMatchObject({ actor: { id: owner.userId }, after: { source: 'cli' } });
    expect(byAction('visitor.delete')).toMatchObject({ actor: { type: 'key' }, target: { type: 'deletion', id: expect.stringMatching(/^del_/) } });
    // Once the deletion ran, nothing in the log names the visitor or its event, nor holds the values the event had.
    await (h.app.locals.services as { deletions: { idle(): Promise<void> } }).deletions.idle();
    const log = JSON.stringify(await h.store.audit.all());
    expect(log).not.toContain(seen.body.visitorId);
    expect(log).not.toContain(seen.body.requestId);
    expect(log).not.toContain('order-7');
    const forgotten = { target: { type: 'event', id: 'deleted' }, before: null, after: null };
    expect((await owner.agent.get(`/api/accounts/${H}/audit?action=event.update`)).body.entries).toEqual([
      { ...byKey, ...forgotten },
      { ...byUser, ...forgotten },
    ]);

    // Changes through the server API are the key's.
    const visitor = 'iq_01JD0S3V6ZQ8Y0K2W3ZP4X5Y6Z';
    expect((await h.http().delete(`/v1/visitors/${visitor}`).set('authorization', `Bearer ${secret.body.key}`)).status).toBe(404);
    const selfRevoke = await h.http().delete('/v1/keys/self').set('x-api-key', cliKey);
    expect(selfRevoke.status).toBe(200);
    const latest = (await owner.agent.get(`/api/accounts/${H}/audit?limit=1`)).body.entries[0];
    expect(latest).toMatchObject({ action: 'key.revoke', actor: { type: 'key', label: expect.stringMatching(/^svc_live_/) } });

    // No secret or password anywhere in the log.
    const all = JSON.stringify(await h.store.audit.all());
    for (const p of plaintexts) expect(all.includes(p), p.slice(0, 12)).toBe(false);
  });

  it('pages newest first with a paginationKey and filters by member, action and time', async () => {
    const owner = await signup('founder@i.example');
    const I = owner.accountId;
    const start = h.clock.now();
    for (let i = 0; i < 5; i++) {
      await owner.agent
        .post('/api/projects')
        .set('origin', origin)
        .send({ name: `p${i}` });
      h.clock.advance(1000);
    }
    const viewer = await member(owner.agent, I, 'viewer');
    const get = (q: string) => owner.agent.get(`/api/accounts/${I}/audit?${q}`);

    const first = await get('limit=2&action=project.create');
    expect(first.body.entries.map((e: { after: { name: string } }) => e.after.name)).toEqual(['p4', 'p3']);
    const second = await get(`limit=2&action=project.create&paginationKey=${first.body.paginationKey}`);
    expect(second.body.entries.map((e: { after: { name: string } }) => e.after.name)).toEqual(['p2', 'p1']);
    const third = await get(`limit=2&action=project.create&paginationKey=${second.body.paginationKey}`);
    expect(third.body.entries.map((e: { after: { name: string } }) => e.after.name)).toEqual(['p0']);
    expect(third.body.paginationKey).toBeUndefined();

    const window = await get(`action=project.create&start=${start + 1000}&end=${start + 2000}`);
    expect(window.body.entries.map((e: { after: { name: string } }) => e.after.name)).toEqual(['p2', 'p1']);
    const byViewer = await get(`member=${viewer.userId}`);
    expect(byViewer.body.entries.map((e: { action: string }) => e.action)).toEqual(['member.join']);
    expect((await get('paginationKey=nonsense')).status).toBe(400);
    expect((await get('action=nonsense')).status).toBe(400);
    expect((await get('limit=101')).status).toBe(400);
    // Another account's log is not there to read.
    const stranger = await signup('stranger@i.example');
    expect((await stranger.agent.get(`/api/accounts/${I}/audit`)).status).toBe(404);
    expect((await viewer.agent.get(`/api/accounts/${I}/audit`)).status).toBe(403);
  });
});

describe("the administrator's changes", () => {
  it('are in the log of the account they change: plans in the customer’s, invitations in the administrator’s, once', async () => {
    const main = h;
    h = await createHarness(import.meta.filename);
    try {
      const admin = await signup('root@k.example');
      const customer = await signup('customer@k.example');
      const plan = await admin.agent.put(`/api/admin/accounts/${customer.accountId}/plan`).set('origin', origin).send({ plan: 'scale' });
      expect(plan.status).toBe(200);
      expect(plan.body.emails).toEqual(['customer@k.example']);
      const inv = await admin.agent.post('/api/admin/invitations').set('origin', origin).send({ email: 'new@k.example' });
      for (let i = 0; i < 2; i++) expect((await admin.agent.delete(`/api/admin/invitations/${inv.body.invitation.id}`).set('origin', origin)).status).toBe(200);
      expect((await customer.agent.put('/api/account/plan').set('origin', origin).send({ plan: 'free' })).status).toBe(403);

      const log = async (p: Person & { accountId: string }) =>
        (await p.agent.get(`/api/accounts/${p.accountId}/audit`)).body.entries.map(
          (e: { action: string; actor: { label: string } }) => `${e.action} ${e.actor.label}`,
        );
      expect(await log(customer)).toEqual(['plan.change root@k.example', 'account.create customer@k.example']);
      expect(await log(admin)).toEqual([
        'instance.invitation_revoke root@k.example',
        'instance.invitation_create root@k.example',
        'account.create root@k.example',
      ]);
      expect(JSON.stringify(await h.store.audit.all())).not.toContain(new URL(inv.body.url).searchParams.get('invite'));
    } finally {
      await h.close();
      h = main;
    }
  });
});

describe('accounts from before teams', () => {
  it('makes the user of each single-user account its owner, once, without losing data', async () => {
    // A database of the version before teams (no members, no marker).
    const main = h;
    h = await createHarness(import.meta.filename);
    try {
      await legacy();
    } finally {
      await h.close();
      h = main;
    }
  });

  async function legacy() {
    const now = new Date(h.clock.now());
    const users = h.store.db.collection<Record<string, unknown>>('users');
    const accounts = h.store.db.collection<Record<string, unknown>>('accounts');
    await accounts.insertOne({ _id: 'acc_LEGACY00000000000000000000' as never, plan: 'growth', createdAt: now });
    const pw = await import('../../../server/accounts/passwords.js').then((m) => m.hashPassword('legacy users pass 42'));
    await users.insertOne({
      _id: 'usr_LEGACY00000000000000000000' as never,
      email: 'legacy@old.example',
      name: null,
      accountId: 'acc_LEGACY00000000000000000000',
      passwordHash: pw,
      createdAt: now,
    });
    await h.store.db.collection('emails').insertOne({ _id: 'legacy@old.example' as never, userId: 'usr_LEGACY00000000000000000000' });

    const members = h.store.db.collection('members');
    const [a, b] = await Promise.all([migrate(h.store), migrate(h.store)]);
    expect(a.owners + b.owners).toBe(1);
    expect(await members.countDocuments()).toBe(1);
    expect((await migrate(h.store)).owners).toBe(0);

    const agent = request.agent(h.app);
    const login = await agent.post('/api/auth/login').set('origin', origin).send({ email: 'legacy@old.example', password: 'legacy users pass 42' });
    expect(login.body).toMatchObject({ account: { id: 'acc_LEGACY00000000000000000000', plan: 'growth' }, role: 'owner' });
    expect((await agent.get('/api/accounts/acc_LEGACY00000000000000000000/members')).body.members).toEqual([
      { userId: 'usr_LEGACY00000000000000000000', email: 'legacy@old.example', name: null, role: 'owner', joinedAt: now.toISOString() },
    ]);
  }
});

describe('two processes on one database', () => {
  it('a removal or a lowered role made through one process holds on the member’s next request through the other', async () => {
    const other = await h.otherProcess();
    const owner = await signup('founder@j.example');
    const J = owner.accountId;
    const m = await member(owner.agent, J, 'admin');
    // The member's cookie, sent to the other process.
    const cookie =
      (await h.store.db.collection('sessions').findOne({ userId: m.userId })) &&
      (m.agent as unknown as { jar: { getCookie(n: string, o: object): { value: string } } }).jar.getCookie('deviceid_session', {
        path: '/',
        domain: '127.0.0.1',
        secure: false,
        script_only: false,
      });
    const viaOther = (path: string) => other.http().get(path).set('cookie', `deviceid_session=${cookie!.value}`);
    expect((await viaOther(`/api/accounts/${J}/members`)).status).toBe(200);
    await owner.agent.patch(`/api/accounts/${J}/members/${m.userId}`).set('origin', origin).send({ role: 'viewer' });
    expect((await viaOther(`/api/accounts/${J}/members`)).status).toBe(403);
    expect((await viaOther('/api/account/usage')).status).toBe(200);
    await owner.agent.delete(`/api/accounts/${J}/members/${m.userId}`).set('origin', origin);
    expect((await viaOther('/api/account/usage')).status).toBe(401);
  });
});
