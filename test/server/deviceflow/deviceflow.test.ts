// The device code flow through HTTP on the real database: both public
// endpoints, every state transition (time moved by the injected clock),
// exactly-once key delivery, slow_down, deny, the consent API with its
// brute-force cap and CSRF, the pages' redirects and headers, and the sweep.
import { createHash } from 'node:crypto';
import request from 'supertest';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DEVICE_CODES_PER_IP_PER_MINUTE, UNKNOWN_CODE_WINDOW_SECONDS, UNKNOWN_CODES_PER_IP, UNKNOWN_CODES_PER_USER } from '../../../contract/deviceflow.js';
import { GRANT_TOMBSTONE_MS, grantSweep } from '../../../server/deviceflow/service.js';
import { ipLimitKey } from '../../../server/edge/address.js';
import { normalizeUserCode } from '../../../server/deviceflow/codes.js';
import { safeNext } from '../../../server/pages/next.js';
import { joinAccount, signUp, type Customer } from '../../support/dashboard.js';
import { authorizeGrant, cliKeys, denyGrant, getGrant, poll, startGrant } from '../../support/deviceflow.js';
import { createHarness, type Harness } from '../../support/harness.js';
import { deviceValues, identifyBody } from '../../support/signals.js';

let h: Harness;
let c: Customer;
beforeAll(async () => {
  h = await createHarness(import.meta.filename);
  c = await signUp(h);
});
afterAll(async () => {
  await h.close();
});
// Every test starts in fresh rate-limit windows (all requests come from one IP).
beforeEach(() => {
  h.clock.advance(UNKNOWN_CODE_WINDOW_SECONDS * 1000 + 1);
});

const TTL_MS = 600_000;
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
const USER_CODE_RE = /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/;
const LIVE_KEY_RE = /^svc_live_[0-9A-Za-z]{38}$/;
const COLLECTIONS = ['deviceGrants', 'deviceUserCodes', 'deviceGrantClaims', 'deviceFlowLimits', 'apiKeys'];

async function dump(): Promise<string> {
  const parts = await Promise.all(COLLECTIONS.map((n) => h.store.db.collection(n).find().toArray()));
  return JSON.stringify(parts);
}

let seed = 5000;
const identify = (key: string) =>
  h
    .http()
    .post('/v1/identify')
    .set('x-api-key', key)
    .send(identifyBody(deviceValues(++seed)));

describe('POST /api/cli/device-code', () => {
  it('starts a grant: 200 with a 64-character device code, an XXXX-XXXX user code, the verification URL, 600 s and an interval', async () => {
    const res = await h.http().post('/api/cli/device-code').set('user-agent', 'acme-cli/1.0').send({ client_name: '  Acme CLI  ' });
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toEqual({
      device_code: expect.stringMatching(/^[A-Za-z0-9_-]{64}$/),
      user_code: expect.stringMatching(USER_CODE_RE),
      verification_url: `${h.config.baseUrl}/cli/auth?code=${res.body.user_code}`,
      expires_in: 600,
      interval: 5,
    });
    // Stored under the device code's hash only, with the trimmed name and where the request came from.
    const grant = await h.store.db.collection('deviceGrants').findOne({ _id: sha256(res.body.device_code) as never });
    expect(grant).toMatchObject({ clientName: 'Acme CLI', requestUserAgent: 'acme-cli/1.0', requestIp: expect.stringMatching(/127\.0\.0\.1|::1/) });
    expect(await dump()).not.toContain(res.body.device_code);
  });

  it('gives every live grant its own user code and device code', async () => {
    const grants = await Promise.all(Array.from({ length: DEVICE_CODES_PER_IP_PER_MINUTE }, () => startGrant(h)));
    expect(new Set(grants.map((g) => g.user_code)).size).toBe(grants.length);
    expect(new Set(grants.map((g) => g.device_code)).size).toBe(grants.length);
  });

  it.each([
    [{}, /^client_name: Required/],
    [{ client_name: '' }, /^client_name: must not be empty/],
    [{ client_name: '    ' }, /^client_name: must not be empty/],
    [{ client_name: 'x'.repeat(65) }, /^client_name: must be at most 64 characters/],
    [{ client_name: 'evil\u0007bell' }, /^client_name: must not contain control characters/],
    [{ client_name: 'line\nbreak' }, /^client_name: must not contain control characters/],
    [{ client_name: 'acme\u202Eexe.cod' }, /^client_name: must not contain control characters/],
    [{ client_name: 42 }, /^client_name: Expected string/],
  ])('rejects %o with 400 {error}', async (body, error) => {
    const res = await h.http().post('/api/cli/device-code').send(body);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: expect.stringMatching(error), code: expect.any(String) });
  });

  it('accepts 64 characters after trimming, and non-ASCII names', async () => {
    const res = await h
      .http()
      .post('/api/cli/device-code')
      .send({ client_name: `  ${'y'.repeat(64)}  ` });
    expect(res.status).toBe(200);
    expect((await h.http().post('/api/cli/device-code').send({ client_name: 'Größe 🚀 CLI' })).status).toBe(200);
  });

  it(`answers 429 with Retry-After after ${DEVICE_CODES_PER_IP_PER_MINUTE} grants a minute from one IP, and again 200 a minute later`, async () => {
    for (let i = 0; i < DEVICE_CODES_PER_IP_PER_MINUTE; i++) await startGrant(h);
    h.clock.advance(30_000);
    const limited = await h.http().post('/api/cli/device-code').send({ client_name: 'one too many' });
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({ error: expect.stringMatching(/Too many device codes/), code: expect.any(String) });
    expect(Number(limited.headers['retry-after'])).toBe(30);
    h.clock.advance(30_000);
    expect((await h.http().post('/api/cli/device-code').send({ client_name: 'next minute' })).status).toBe(200);
  });
});

describe('POST /api/cli/token', () => {
  it('answers 200 pending with the interval while nobody decided, and changes nothing', async () => {
    const g = await startGrant(h);
    const res = await poll(h, g.device_code);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'pending', interval: 5 });
    expect(res.headers['cache-control']).toBe('no-store');
    h.clock.advance(5_000);
    expect((await poll(h, g.device_code)).body).toEqual({ status: 'pending', interval: 5 });
  });

  it.each([
    ['a malformed device_code', { device_code: 'nope' }, 'Unknown or malformed device_code'],
    ['an unknown device_code', { device_code: 'A'.repeat(64) }, 'Unknown or malformed device_code'],
    ['a user code instead', { device_code: 'BCDF-GHJK' }, 'Unknown or malformed device_code'],
    ['no device_code', {}, 'device_code: Required'],
  ])('answers 400 {error} to %s', async (_what, body, error) => {
    const res = await h.http().post('/api/cli/token').send(body);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error, code: expect.any(String) });
  });

  it('slow_down: a poll sooner than the interval still answers pending but raises the interval by 5 s, for good', async () => {
    const g = await startGrant(h);
    expect((await poll(h, g.device_code)).body).toEqual({ status: 'pending', interval: 5 });
    h.clock.advance(1_000);
    expect((await poll(h, g.device_code)).body).toEqual({ status: 'pending', interval: 10 });
    h.clock.advance(10_000);
    expect((await poll(h, g.device_code)).body).toEqual({ status: 'pending', interval: 10 });
    h.clock.advance(9_999);
    expect((await poll(h, g.device_code)).body).toEqual({ status: 'pending', interval: 15 });
    h.clock.advance(15_000);
    expect((await poll(h, g.device_code)).body).toEqual({ status: 'pending', interval: 15 });
    // Another grant is not affected.
    const other = await startGrant(h);
    expect((await poll(h, other.device_code)).body).toEqual({ status: 'pending', interval: 5 });
  });

  it('pending → expired after 600 s: 410 {status: "expired"}, on every later poll', async () => {
    const g = await startGrant(h);
    h.clock.advance(TTL_MS - 1);
    expect((await poll(h, g.device_code)).status).toBe(200);
    h.clock.advance(1);
    const res = await poll(h, g.device_code);
    expect(res.status).toBe(410);
    expect(res.body).toEqual({ status: 'expired' });
    h.clock.advance(60_000);
    expect((await poll(h, g.device_code)).body).toEqual({ status: 'expired' });
    // The consent page says so too, and cannot approve it any more.
    expect((await getGrant(c, g.user_code)).status).toBe(410);
    const late = await authorizeGrant(c, g.user_code);
    expect(late.status).toBe(410);
    expect(late.body).toEqual({ error: 'This code has expired: start again in your terminal', code: expect.any(String) });
  });
});

describe('approval, consumption and the issued key', () => {
  it('pending → authorized → consumed: the key is returned once, works on identify, is listed as "<client_name> (CLI)" and dies when revoked', async () => {
    const g = await startGrant(h, 'deploy-bot');
    const view = await getGrant(c, g.user_code);
    expect(view.status).toBe(200);
    expect(view.headers['cache-control']).toBe('no-store');
    expect(view.body).toEqual({
      userCode: g.user_code,
      clientName: 'deploy-bot',
      keyName: 'deploy-bot (CLI)',
      status: 'pending',
      requestedAt: new Date(h.clock.now()).toISOString(),
      expiresAt: new Date(h.clock.now() + TTL_MS).toISOString(),
      requestIp: expect.stringMatching(/127\.0\.0\.1|::1/),
      requestUserAgent: 'acme-cli/1.2.3 (linux)',
      accountId: null,
      projectId: null,
    });
    expect(await cliKeys(c)).toEqual([]);

    const approved = await authorizeGrant(c, g.user_code);
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({ status: 'authorized', accountId: c.accountId, projectId: c.projectId });
    // Approval alone creates no key: it is created when the tool collects it.
    expect(await cliKeys(c)).toEqual([]);

    const got = await poll(h, g.device_code);
    expect(got.status).toBe(200);
    expect(got.body).toEqual({ status: 'authorized', api_key: expect.stringMatching(LIVE_KEY_RE) });
    const apiKey = got.body.api_key as string;

    const again = await poll(h, g.device_code);
    expect(again.status).toBe(410);
    expect(again.body).toEqual({ status: 'consumed' });
    expect((await getGrant(c, g.user_code)).body.status).toBe('consumed');

    // Nothing of the plaintext is kept.
    expect(await dump()).not.toContain(apiKey);

    const keys = await cliKeys(c);
    expect(keys).toEqual([expect.objectContaining({ name: 'deploy-bot (CLI)', type: 'live', status: 'active', source: 'cli' })]);
    expect((await identify(apiKey)).status).toBe(200);

    const revoked = await c.agent.delete(`/api/projects/${c.projectId}/keys/${keys[0]!.id}`).set('origin', c.origin);
    expect(revoked.status).toBe(200);
    const refused = await identify(apiKey);
    expect(refused.status).toBe(401);
    expect(refused.body).toEqual({ error: 'Invalid or missing API key', code: expect.any(String) });
  });

  it('issues the key in the project chosen on the consent page', async () => {
    const other = await c.agent.post('/api/projects').set('origin', c.origin).send({ name: 'Staging' });
    expect(other.status).toBe(201);
    const g = await startGrant(h, 'staging-tool');
    expect((await authorizeGrant(c, g.user_code, other.body.id)).status).toBe(200);
    expect((await poll(h, g.device_code)).status).toBe(200);
    expect((await cliKeys(c, other.body.id)).map((k) => k.name)).toEqual(['staging-tool (CLI)']);
    expect((await cliKeys(c)).map((k) => k.name)).not.toContain('staging-tool (CLI)');
  });

  it('50 concurrent polls of an authorized grant: exactly one receives the key, the others 410 consumed', async () => {
    const customer = await signUp(h);
    const g = await startGrant(h, 'race');
    expect((await authorizeGrant(customer, g.user_code)).status).toBe(200);
    const results = await Promise.all(Array.from({ length: 50 }, () => poll(h, g.device_code)));
    const winners = results.filter((r) => r.status === 200);
    expect(winners).toHaveLength(1);
    expect(winners[0]!.body).toEqual({ status: 'authorized', api_key: expect.stringMatching(LIVE_KEY_RE) });
    const losers = results.filter((r) => r.status !== 200);
    expect(losers).toHaveLength(49);
    for (const r of losers) {
      expect(r.status).toBe(410);
      expect(r.body).toEqual({ status: 'consumed' });
    }
    expect((await cliKeys(customer)).map((k) => k.name)).toEqual(['race (CLI)']);
  });

  it('an authorized grant never polled within 600 s expires, and no key of it exists', async () => {
    const customer = await signUp(h);
    const g = await startGrant(h, 'forgotten');
    expect((await authorizeGrant(customer, g.user_code)).status).toBe(200);
    h.clock.advance(TTL_MS);
    const res = await poll(h, g.device_code);
    expect(res.status).toBe(410);
    expect(res.body).toEqual({ status: 'expired' });
    expect(await cliKeys(customer)).toEqual([]);
    expect(JSON.stringify(await h.store.db.collection('apiKeys').find({ source: 'cli', projectId: customer.projectId }).toArray())).toBe('[]');
    expect((await getGrant(customer, g.user_code)).status).toBe(410);
  });

  it('gives nothing when the chosen project no longer belongs to the account by the time the tool polls', async () => {
    const customer = await signUp(h);
    const g = await startGrant(h, 'moved');
    expect((await authorizeGrant(customer, g.user_code)).status).toBe(200);
    await h.store.db.collection('projects').updateOne({ _id: customer.projectId as never }, { $set: { accountId: 'acc_someone_else' } });
    const res = await poll(h, g.device_code);
    expect(res.status).toBe(410);
    expect(res.body).toEqual({ status: 'denied' });
    expect(await h.store.db.collection('apiKeys').countDocuments({ source: 'cli', projectId: customer.projectId })).toBe(0);
  });
});

describe('deny', () => {
  it('pending → denied: the tool gets 410 {status: "denied"} from then on, and no key is created', async () => {
    const customer = await signUp(h);
    const g = await startGrant(h, 'unwanted');
    const res = await denyGrant(customer, g.user_code);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'denied', accountId: null, projectId: null, clientName: 'unwanted' });
    const polled = await poll(h, g.device_code);
    expect(polled.status).toBe(410);
    expect(polled.body).toEqual({ status: 'denied' });
    h.clock.advance(TTL_MS);
    expect((await poll(h, g.device_code)).body).toEqual({ status: 'denied' });
    expect(await cliKeys(customer)).toEqual([]);
  });

  it('a decision is final: repeating it answers 200, the opposite one 409', async () => {
    const customer = await signUp(h);
    const denied = await startGrant(h, 'one');
    expect((await denyGrant(customer, denied.user_code)).status).toBe(200);
    expect((await denyGrant(customer, denied.user_code)).status).toBe(200);
    const flip = await authorizeGrant(customer, denied.user_code);
    expect(flip.status).toBe(409);
    expect(flip.body).toEqual({ error: 'You already denied this request', code: expect.any(String) });

    const approved = await startGrant(h, 'two');
    expect((await authorizeGrant(customer, approved.user_code)).status).toBe(200);
    expect((await authorizeGrant(customer, approved.user_code)).body).toMatchObject({ status: 'authorized' });
    const deny = await denyGrant(customer, approved.user_code);
    expect(deny.status).toBe(409);
    expect(deny.body).toEqual({ error: 'You already approved this request', code: expect.any(String) });
    const other = await customer.agent.post('/api/projects').set('origin', customer.origin).send({ name: 'Other' });
    const moved = await authorizeGrant(customer, approved.user_code, other.body.id);
    expect(moved.status).toBe(409);
    expect((await poll(h, approved.device_code)).status).toBe(200);
    expect((await cliKeys(customer)).map((k) => k.name)).toEqual(['two (CLI)']);
  });

  it('concurrent approve and deny: exactly one decision wins and the tool sees that one', async () => {
    const customer = await signUp(h);
    const g = await startGrant(h, 'tug-of-war');
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? denyGrant(customer, g.user_code) : authorizeGrant(customer, g.user_code))));
    const ok = results.filter((r) => r.status === 200);
    const winner = ok[0]!.body.status as string;
    expect(ok.every((r) => r.body.status === winner)).toBe(true);
    expect(results.filter((r) => r.status === 409)).toHaveLength(10 - ok.length);
    expect(ok.length).toBe(5);
    const polled = await poll(h, g.device_code);
    if (winner === 'denied') expect(polled.body).toEqual({ status: 'denied' });
    else expect(polled.body).toEqual({ status: 'authorized', api_key: expect.stringMatching(LIVE_KEY_RE) });
  });
});

describe('approval in one of several accounts', () => {
  /** A user who owns their account, is an admin of `teamB`'s and an analyst of `teamC`'s. */
  async function memberOfThree() {
    const [user, teamB, teamC] = await Promise.all([signUp(h), signUp(h), signUp(h)]);
    await joinAccount(teamB, user, 'admin');
    await joinAccount(teamC, user, 'analyst');
    return { user, teamB, teamC };
  }
  const audit = async (owner: Customer, action: string) => {
    const res = await owner.agent.get(`/api/accounts/${owner.accountId}/audit?action=${action}`);
    expect(res.status).toBe(200);
    return res.body.entries as Array<{ action: string; target: unknown; after: unknown; actor: unknown }>;
  };
  /** The CLI keys of `owner`'s project, read through that account's own key list. */
  const keysOf = (owner: Customer) => cliKeys(owner).then((keys) => keys.map((k) => k.name));

  it('lists the accounts where the user may create keys, each with its projects; not those where the role is lower', async () => {
    const { user, teamB } = await memberOfThree();
    const staging = await teamB.agent.post('/api/projects').set('origin', teamB.origin).send({ name: 'Staging' });
    const res = await user.agent.get('/api/cli/accounts');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      accounts: [
        { id: user.accountId, role: 'owner', current: true, projects: [{ id: user.projectId, name: 'Default project' }] },
        {
          id: teamB.accountId,
          role: 'admin',
          current: false,
          projects: [
            { id: teamB.projectId, name: 'Default project' },
            { id: staging.body.id, name: 'Staging' },
          ],
        },
      ],
    });
    // The current account comes first, whichever the user joined first.
    expect((await user.agent.put('/api/session/account').set('origin', user.origin).send({ accountId: teamB.accountId })).status).toBe(200);
    const switched = (await user.agent.get('/api/cli/accounts')).body.accounts as { id: string; current: boolean }[];
    expect(switched.map((a) => [a.id, a.current])).toEqual([
      [teamB.accountId, true],
      [user.accountId, false],
    ]);
  });

  it('creates the key in the chosen account and project, audited there; the session stays in its account', async () => {
    const { user, teamB } = await memberOfThree();
    const g = await startGrant(h, 'team-tool');
    const approved = await authorizeGrant(user, g.user_code, teamB.projectId, teamB.accountId);
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({ status: 'authorized', accountId: teamB.accountId, projectId: teamB.projectId });
    // Still working in their own account, they see the decision they made in the other.
    expect((await user.agent.get('/api/account')).body.account.id).toBe(user.accountId);
    expect((await getGrant(user, g.user_code)).body).toMatchObject({ status: 'authorized', accountId: teamB.accountId });
    expect((await authorizeGrant(user, g.user_code, teamB.projectId, teamB.accountId)).status).toBe(200);
    const moved = await authorizeGrant(user, g.user_code);
    expect(moved.status).toBe(409);
    expect(moved.body.error).toBe('You already approved this request for another project');

    expect((await poll(h, g.device_code)).body).toMatchObject({ status: 'authorized' });
    expect(await keysOf(teamB)).toEqual(['team-tool (CLI)']);
    expect(await keysOf(user)).toEqual([]);

    const userId = (await user.agent.get('/api/account')).body.user.id as string;
    const [entry, ...more] = await audit(teamB, 'deviceflow.authorize');
    expect(more).toEqual([]);
    expect(entry).toMatchObject({
      actor: { type: 'user', id: userId },
      target: { type: 'project', id: teamB.projectId },
      after: { clientName: 'team-tool', accountId: teamB.accountId, projectId: teamB.projectId },
    });
    expect(await audit(user, 'deviceflow.authorize')).toEqual([]);
  });

  it('refuses an account where the role may not create keys (403), one the user is not in (404) and another account’s project (404); nothing is approved', async () => {
    const { user, teamB, teamC } = await memberOfThree();
    const stranger = await signUp(h);
    const g = await startGrant(h, 'refused-tool');

    const analyst = await authorizeGrant(user, g.user_code, teamC.projectId, teamC.accountId);
    expect(analyst.status).toBe(403);
    expect(analyst.body).toEqual({ error: 'Your role does not allow this', code: 'role_not_allowed' });
    const notMine = await authorizeGrant(user, g.user_code, stranger.projectId, stranger.accountId);
    expect(notMine.status).toBe(404);
    expect(notMine.body).toEqual({ error: 'Account not found', code: 'account_not_found' });
    const mixed = await authorizeGrant(user, g.user_code, user.projectId, teamB.accountId);
    expect(mixed.status).toBe(404);
    expect(mixed.body).toEqual({ error: 'Project not found', code: 'project_not_found' });
    const malformed = await user.agent
      .post(`/api/cli/grants/${g.user_code}/authorize`)
      .set('origin', user.origin)
      .send({ accountId: 7, projectId: user.projectId });
    expect(malformed.status).toBe(400);

    expect((await poll(h, g.device_code)).body).toEqual({ status: 'pending', interval: 5 });
    expect((await getGrant(user, g.user_code)).body.status).toBe('pending');
    expect(await audit(teamC, 'deviceflow.authorize')).toEqual([]);
    expect(await audit(stranger, 'deviceflow.authorize')).toEqual([]);
    expect(await keysOf(teamC)).toEqual([]);
  });

  it('checks the role in the chosen account again when the tool polls', async () => {
    const { user, teamB } = await memberOfThree();
    const g = await startGrant(h, 'demoted-tool');
    expect((await authorizeGrant(user, g.user_code, teamB.projectId, teamB.accountId)).status).toBe(200);
    const userId = (await user.agent.get('/api/account')).body.user.id as string;
    const lowered = await teamB.agent.patch(`/api/accounts/${teamB.accountId}/members/${userId}`).set('origin', teamB.origin).send({ role: 'analyst' });
    expect(lowered.status).toBe(200);
    expect((await poll(h, g.device_code)).body).toEqual({ status: 'denied' });
    expect(await keysOf(teamB)).toEqual([]);
  });
});

describe('consent API: codes, accounts, CSRF, brute force', () => {
  it('accepts the user code in any case, with or without the dash', async () => {
    const g = await startGrant(h);
    for (const form of [g.user_code.toLowerCase(), g.user_code.replace('-', ''), ` ${g.user_code.replace('-', ' ')} `]) {
      const res = await getGrant(c, form);
      expect(res.status, form).toBe(200);
      expect(res.body.userCode).toBe(g.user_code);
    }
    expect(normalizeUserCode('bcdf-ghjk')).toBe('BCDFGHJK');
    expect(normalizeUserCode('BCDF-GHJA')).toBeNull();
    expect(normalizeUserCode('BCDF-GHJ')).toBeNull();
  });

  it('answers 404 {error} for unknown or malformed codes', async () => {
    for (const code of ['BBBB-BBBB', 'not-a-code']) {
      const res = await getGrant(c, code);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'Unknown code: check the code shown in your terminal', code: expect.any(String) });
    }
  });

  it("refuses another account's project with 404 and leaves the grant pending", async () => {
    const other = await signUp(h);
    const g = await startGrant(h);
    const res = await authorizeGrant(c, g.user_code, other.projectId);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'Project not found', code: expect.any(String) });
    expect((await poll(h, g.device_code)).body).toEqual({ status: 'pending', interval: 5 });
  });

  it('shows a decided grant only to the account that decided; others get 410', async () => {
    const other = await signUp(h);
    const g = await startGrant(h);
    expect((await authorizeGrant(c, g.user_code)).status).toBe(200);
    expect((await getGrant(c, g.user_code)).body.status).toBe('authorized');
    for (const res of [await getGrant(other, g.user_code), await denyGrant(other, g.user_code), await authorizeGrant(other, g.user_code)]) {
      expect(res.status).toBe(410);
      expect(res.body).toEqual({ error: 'This code has already been used', code: expect.any(String) });
    }
  });

  it('requires a session: 401 without one', async () => {
    const g = await startGrant(h);
    const anon = request(h.app);
    const origin = c.origin;
    for (const res of [
      await anon.get(`/api/cli/grants/${g.user_code}`),
      await request(h.app).post(`/api/cli/grants/${g.user_code}/authorize`).set('origin', origin).send({ projectId: c.projectId }),
      await request(h.app).post(`/api/cli/grants/${g.user_code}/deny`).set('origin', origin).send({}),
    ]) {
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'Not signed in', code: expect.any(String) });
    }
  });

  it('rejects cross-site and non-JSON decisions (CSRF) and the grant stays pending', async () => {
    const g = await startGrant(h);
    const path = `/api/cli/grants/${g.user_code}`;
    const evil = await c.agent.post(`${path}/authorize`).set('origin', 'https://evil.example').send({ projectId: c.projectId });
    expect(evil.status).toBe(403);
    expect(evil.body).toEqual({ error: 'Cross-site request rejected', code: expect.any(String) });
    expect((await c.agent.post(`${path}/authorize`).send({ projectId: c.projectId })).status).toBe(403);
    expect((await c.agent.post(`${path}/deny`).set('origin', 'https://evil.example').send({})).status).toBe(403);
    expect((await c.agent.post(`${path}/deny`).set('referer', 'https://evil.example/page').send({})).status).toBe(403);
    const form = await c.agent.post(`${path}/authorize`).set('origin', c.origin).type('form').send(`projectId=${c.projectId}`);
    expect(form.status).toBe(415);
    expect((await poll(h, g.device_code)).body).toEqual({ status: 'pending', interval: 5 });
    expect((await getGrant(c, g.user_code)).body.status).toBe('pending');
  });

  it(`allows ${UNKNOWN_CODES_PER_USER} unknown codes per user per 10 minutes; then every lookup is 429, valid codes included`, async () => {
    const user = await signUp(h);
    const g = await startGrant(h);
    for (let i = 0; i < UNKNOWN_CODES_PER_USER; i++) {
      // Lookups of a real code do not count.
      expect((await getGrant(user, g.user_code)).status).toBe(200);
      expect((await getGrant(user, `BBBB-BBB${'CDFGH'[i]}`)).status).toBe(404);
    }
    for (const res of [
      await getGrant(user, 'BBBB-BBBB'),
      await getGrant(user, g.user_code),
      await authorizeGrant(user, g.user_code),
      await denyGrant(user, g.user_code),
    ]) {
      expect(res.status).toBe(429);
      expect(res.body).toEqual({ error: 'Too many unknown codes tried; try again later', code: expect.any(String) });
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
      expect(Number(res.headers['retry-after'])).toBeLessThanOrEqual(UNKNOWN_CODE_WINDOW_SECONDS);
    }
    // Nobody decided anything; another user is not affected.
    expect((await getGrant(c, g.user_code)).body.status).toBe('pending');
    h.clock.advance(UNKNOWN_CODE_WINDOW_SECONDS * 1000);
    const fresh = await startGrant(h);
    expect((await getGrant(user, fresh.user_code)).status).toBe(200);
  });

  it('caps concurrent unknown-code guesses of one user exactly', async () => {
    const user = await signUp(h);
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => getGrant(user, `BBBB-CC${'BCDFGHJKLMNP'[i]}B`)));
    expect(results.filter((r) => r.status === 404)).toHaveLength(UNKNOWN_CODES_PER_USER);
    expect(results.filter((r) => r.status === 429)).toHaveLength(12 - UNKNOWN_CODES_PER_USER);
  });

  it(`allows ${UNKNOWN_CODES_PER_IP} unknown codes per IP per 10 minutes across accounts`, async () => {
    const users = await Promise.all(Array.from({ length: UNKNOWN_CODES_PER_IP / UNKNOWN_CODES_PER_USER }, () => signUp(h)));
    for (const user of users) {
      for (let i = 0; i < UNKNOWN_CODES_PER_USER; i++) expect((await getGrant(user, 'BBBB-BBBB')).status).toBe(404);
    }
    const newcomer = await signUp(h);
    expect((await getGrant(newcomer, 'BBBB-BBBB')).status).toBe(429);
    // The refused newcomer's own budget was given back.
    const userId = (await newcomer.agent.get('/api/account')).body.user.id as string;
    expect((await h.store.db.collection('deviceFlowLimits').findOne({ _id: `user-code:user:${userId}` as never }))?.count).toBe(0);
    h.clock.advance(UNKNOWN_CODE_WINDOW_SECONDS * 1000);
    for (let i = 0; i < UNKNOWN_CODES_PER_USER; i++) expect((await getGrant(newcomer, 'BBBB-BBBB')).status).toBe(404);
  });
});

describe('store: user codes and claims', () => {
  it('a user code is unique among live grants and reused only after its grant expired', async () => {
    const now = new Date(h.clock.now());
    const code = 'ZZZZZZZZ';
    const expiresAt = new Date(now.getTime() + TTL_MS);
    expect(await h.store.grants.claimUserCode({ _id: code, grantId: 'g1', expiresAt }, now)).toBe(true);
    expect(await h.store.grants.claimUserCode({ _id: code, grantId: 'g2', expiresAt }, now)).toBe(false);
    const later = new Date(expiresAt.getTime());
    expect(await h.store.grants.claimUserCode({ _id: code, grantId: 'g3', expiresAt: new Date(later.getTime() + TTL_MS) }, later)).toBe(true);
    expect((await h.store.grants.userCode(code))?.grantId).toBe('g3');
  });

  it('concurrent claims of one transition: exactly one insert wins', async () => {
    const now = new Date(h.clock.now());
    const wins = await Promise.all(
      Array.from({ length: 50 }, () =>
        h.store.grants.claimConsumption({ _id: 'consume:test-grant', grantId: 'test-grant', consumedAt: now, keyId: null, expiresAt: now }),
      ),
    );
    expect(wins.filter(Boolean)).toHaveLength(1);
    // Decisions too: across processes nothing but the unique insert serialises them.
    const decisions = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        h.store.grants.claimDecision({
          _id: 'decide:test-grant',
          grantId: 'test-grant',
          decision: i % 2 ? 'denied' : 'authorized',
          accountId: `acc_${i}`,
          userId: `usr_${i}`,
          projectId: null,
          decidedAt: now,
          expiresAt: now,
        }),
      ),
    );
    expect(decisions.filter(Boolean)).toHaveLength(1);
    const winner = decisions.indexOf(true);
    expect(await h.store.grants.decision('test-grant')).toMatchObject({ accountId: `acc_${winner}` });
  });
});

describe('sweep', () => {
  it('keeps ended grants for the tombstone period (late polls get 410), then deletes grants, codes, claims and windows', async () => {
    const customer = await signUp(h);
    const g = await startGrant(h, 'sweep-me');
    expect((await authorizeGrant(customer, g.user_code)).status).toBe(200);
    expect((await poll(h, g.device_code)).status).toBe(200);
    const grantId = sha256(g.device_code);
    const count = async () =>
      (await h.store.db.collection('deviceGrants').countDocuments({ _id: grantId as never })) +
      (await h.store.db.collection('deviceUserCodes').countDocuments({ grantId })) +
      (await h.store.db.collection('deviceGrantClaims').countDocuments({ grantId }));
    expect(await count()).toBe(4);
    h.clock.advance(TTL_MS + GRANT_TOMBSTONE_MS - 1);
    const service = { sweep: grantSweep(h.store) };
    await service.sweep(new Date(h.clock.now()));
    expect(await count()).toBe(4);
    expect((await poll(h, g.device_code)).body).toEqual({ status: 'consumed' });
    h.clock.advance(2);
    expect(await service.sweep(new Date(h.clock.now()))).toBeGreaterThanOrEqual(4);
    expect(await count()).toBe(0);
    expect(await h.store.db.collection('deviceFlowLimits').countDocuments()).toBe(0);
    expect((await poll(h, g.device_code)).status).toBe(400);
  });
});

describe('pages', () => {
  const SECURITY = {
    'content-security-policy': expect.stringMatching(/script-src 'self'.*frame-ancestors 'none'/),
    'x-frame-options': 'DENY',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'same-origin',
  };

  it('GET /cli/auth without a session redirects to sign-in with this page as `next`, with security headers', async () => {
    const res = await h.http().get('/cli/auth?code=BCDF-GHJK');
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe(`/login?next=${encodeURIComponent('/cli/auth?code=BCDF-GHJK')}`);
    expect(res.headers).toMatchObject(SECURITY);
  });

  it('GET /cli/auth signed in serves the consent page, changes nothing and looks nothing up', async () => {
    const user = await signUp(h);
    const g = await startGrant(h);
    for (let i = 0; i < UNKNOWN_CODES_PER_USER + 1; i++) {
      const res = await user.agent.get(`/cli/auth?code=BBBB-BBBB`);
      expect(res.status).toBe(200);
      expect(res.headers).toMatchObject({ ...SECURITY, 'cache-control': 'no-store' });
      expect(res.text).toContain('<script src="/assets/cli-consent.js" defer></script>');
      expect(res.text).not.toMatch(/<script>|\son\w+=/);
    }
    expect((await user.agent.get(`/cli/auth?code=${g.user_code}`)).status).toBe(200);
    expect((await poll(h, g.device_code)).body).toEqual({ status: 'pending', interval: 5 });
    expect((await getGrant(user, g.user_code)).status).toBe(200);
  });

  it('GET /login serves the sign-in page; signed in with a same-origin `next` it goes there', async () => {
    const page = await h.http().get('/login?next=%2Fcli%2Fauth%3Fcode%3DBCDF-GHJK');
    expect(page.status).toBe(200);
    expect(page.headers).toMatchObject(SECURITY);
    expect(page.text).toContain('/assets/login.js');
    const next = await c.agent.get('/login?next=%2Fcli%2Fauth%3Fcode%3DBCDF-GHJK');
    expect(next.status).toBe(303);
    expect(next.headers.location).toBe('/cli/auth?code=BCDF-GHJK');
    for (const evil of ['//evil.example/x', 'https://evil.example/', '/\\evil.example', '/\\/evil.example', ' //evil.example', 'javascript:alert(1)']) {
      const res = await c.agent.get(`/login?next=${encodeURIComponent(evil)}`);
      expect(res.status, evil).toBe(200);
      expect(res.headers.location).toBeUndefined();
    }
  });

  it('counts IPv6 clients by /64 and IPv4 (also mapped) by address for rate limits', () => {
    expect(ipLimitKey('2001:db8:1:2:aaaa::1')).toBe(ipLimitKey('2001:db8:1:2:bbbb:cccc:dddd:eeee'));
    expect(ipLimitKey('2001:db8:1:2::1')).not.toBe(ipLimitKey('2001:db8:1:3::1'));
    expect(ipLimitKey('::ffff:192.0.2.7')).toBe('192.0.2.7');
    expect(ipLimitKey('192.0.2.7')).not.toBe(ipLimitKey('192.0.2.8'));
  });

  it('safeNext keeps same-origin paths only', () => {
    const o = 'https://id.example.com';
    expect(safeNext('/cli/auth?code=BCDF-GHJK', o)).toBe('/cli/auth?code=BCDF-GHJK');
    for (const bad of ['//evil.example', '/\\evil.example', 'https://evil.example/', 'cli/auth', '/\tx', 'javascript:alert(1)', '', null, undefined]) {
      expect(safeNext(bad, o), String(bad)).toBeNull();
    }
  });

  it('serves the page scripts and stylesheet with security headers', async () => {
    for (const [path, type] of [
      ['/assets/cli-consent.js', /javascript/],
      ['/assets/login.js', /javascript/],
      ['/assets/pages.css', /text\/css/],
    ] as const) {
      const res = await h.http().get(path);
      expect(res.status, path).toBe(200);
      expect(res.headers['content-type']).toMatch(type);
      expect(res.headers['x-content-type-options']).toBe('nosniff');
    }
    expect((await h.http().get('/assets/nope.js')).status).toBe(404);
  });
});
