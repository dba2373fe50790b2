// GET /api/projects/:projectId/hourly: a project's identifications, bots and
// suspects per hour from the counters identify keeps (no extra command per
// identify: test/server/identification/roundtrips.test.ts), equal to the
// identifications served, across processes, at hour and day boundaries,
// per project and account, kept for the longest window.
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOURLY_MAX_HOURS } from '../../../contract/explorer.js';
import { SUSPECT_SCORE_COUNTED } from '../../../contract/suspects.js';
import { defaultSweeps } from '../../../server/maintenance.js';
import { signUp, type Customer } from '../../support/dashboard.js';
import { createHarness, type Harness } from '../../support/harness.js';
import { deviceValues, identifyBody } from '../../support/signals.js';

const HOUR = 3_600_000;

let h: Harness;
beforeAll(async () => {
  h = await createHarness(import.meta.filename, { PLANS: '{"free":{"rps":100000,"monthly":1000000}}', TRUST_PROXY: '127.0.0.1/32,::1' });
});
afterAll(async () => {
  await h.close();
});

type V = ReturnType<typeof deviceValues>;
const headless = (v: V): V => ({ ...v, automation: { ...v.automation, webdriver: true, headlessUserAgent: true } });
const googlebot = (v: V): V => ({
  ...v,
  userAgent: { ...v.userAgent, userAgent: 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html) Chrome/130.0.0.0 Safari/537.36' },
});

/** A device that lies about itself in a virtual machine, as a Googlebot it is not: a suspect score over 50. */
const shady = (v: V): V => ({
  ...googlebot(v),
  tampering: { lieCount: 4, lies: ['navigator.platform', 'screen.width', 'Date.getTimezoneOffset', 'WebGL.getParameter'], canvasNoise: 0, audioNoise: 0 },
  virtualMachine: { softwareRenderer: false, virtualGpu: 'VMware SVGA 3D', markers: [] },
  incognito: { ...v.incognito, likely: true },
});

interface Answer {
  suspectScore: number;
  verdicts: { bot: { kind: 'human' | 'good' | 'bad'; info?: { category: string } } };
}

/** What one hour should count, from identify's answers. */
function expected(answers: Answer[]) {
  const bots = answers.filter((a) => a.verdicts.bot.kind !== 'human');
  return { identifications: answers.length, bots: bots.length, suspects: answers.filter((a) => a.suspectScore >= SUSPECT_SCORE_COUNTED).length };
}

async function identify(key: string, v: V, ip = '81.2.69.142', app = h.app): Promise<Answer> {
  const res = await request(app).post('/v1/identify').set('x-api-key', key).set('x-forwarded-for', ip).send(identifyBody(v));
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as Answer;
}

const hourly = (c: Customer, query = '', projectId = c.projectId) => c.agent.get(`/api/projects/${projectId}/hourly${query ? `?${query}` : ''}`);

async function counts(c: Customer, query = '', projectId = c.projectId) {
  const res = await hourly(c, query, projectId);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as { hours: { start: number; identifications: number; bots: number; suspects: number }[]; botCategories: unknown[]; keptSince: number };
}

describe('hourly counts', () => {
  it('count every identification served in its UTC hour: all, bots, suspects, and bots by category', async () => {
    const c = await signUp(h);
    const live = await c.key('live');
    const test = await c.key('test');
    const t = Date.UTC(2026, 1, 10, 12);
    const at = async (ms: number, key: string, v: V, ip?: string) => {
      h.clock.set(ms);
      return identify(key, v, ip);
    };
    // The last millisecond of 12:00-13:00, then the first of 13:00-14:00; test keys count too (as the explorer lists them).
    const twelve = [
      await at(t + 5 * 60_000, live, deviceValues(301)),
      await at(t + 10 * 60_000, test, headless(deviceValues(302)), '8.9.10.11'),
      await at(t + HOUR - 1, live, googlebot(deviceValues(303)), '66.249.66.1'),
    ];
    const thirteen = [
      await at(t + HOUR, live, headless(deviceValues(304)), '8.9.10.12'),
      await at(t + HOUR + 1, live, deviceValues(301)),
      await at(t + HOUR + 2, live, shady(deviceValues(305))),
    ];
    // The window ends with the hour holding `end`.
    const body = await counts(c, `end=${t + 2 * HOUR + 59_000}&hours=3`);
    expect(body.hours).toEqual([
      { start: t, ...expected(twelve) },
      { start: t + HOUR, ...expected(thirteen) },
      { start: t + 2 * HOUR, identifications: 0, bots: 0, suspects: 0 },
    ]);
    // The kinds of traffic this test means to count are there.
    expect(body.hours[0]).toMatchObject({ identifications: 3, bots: 2 });
    expect(body.hours[1]).toMatchObject({ identifications: 3, bots: 2, suspects: 1 });
    const categories = new Map<string, { good: number; bad: number }>();
    for (const a of [...twelve, ...thirteen].filter((a) => a.verdicts.bot.info)) {
      const row = categories.get(a.verdicts.bot.info!.category) ?? { good: 0, bad: 0 };
      row[a.verdicts.bot.kind === 'good' ? 'good' : 'bad']++;
      categories.set(a.verdicts.bot.info!.category, row);
    }
    expect(body.botCategories).toEqual(
      [...categories].map(([category, n]) => ({ category, ...n })).sort((a, b) => b.good + b.bad - (a.good + a.bad) || (a.category < b.category ? -1 : 1)),
    );
    expect(body.botCategories).toContainEqual({ category: 'search_crawler', good: 1, bad: 1 });

    // By default the 24 hours ending with the current one (the server's clock).
    h.clock.set(t + HOUR + 30 * 60_000);
    const day = await counts(c);
    expect(day.hours).toHaveLength(24);
    expect(day.hours.at(-1)!.start).toBe(t + HOUR);
    expect(day.hours.reduce((n, x) => n + x.identifications, 0)).toBe(6);
  });

  it('are exact with two processes identifying at once, and across midnight (UTC)', async () => {
    const c = await signUp(h);
    const live = await c.key('live');
    const other = await h.otherProcess();
    const midnight = Date.UTC(2026, 1, 11);
    h.clock.set(midnight - 1);
    const before = await Promise.all(Array.from({ length: 12 }, (_, i) => identify(live, deviceValues(400 + i), '81.2.69.142', i % 2 ? other.app : h.app)));
    h.clock.set(midnight);
    const after = await Promise.all(Array.from({ length: 10 }, (_, i) => identify(live, deviceValues(500 + i), '81.2.69.142', i % 2 ? other.app : h.app)));
    // The other process writes what it counted at most a second later, and on close.
    await other.app.drain();
    const body = await counts(c, `end=${midnight}&hours=2`);
    expect(body.hours).toEqual([
      { start: midnight - HOUR, ...expected(before) },
      { start: midnight, ...expected(after) },
    ]);
    expect(body.hours.map((x) => x.identifications)).toEqual([12, 10]);
  });

  it("are the project's own: another project of the account counts apart, another account's is not there to read", async () => {
    const c = await signUp(h);
    const stranger = await signUp(h);
    const second = (await c.agent.post('/api/projects').set('origin', c.origin).send({ name: 'Second' })).body.id as string;
    const t = Date.UTC(2026, 1, 12, 8);
    h.clock.set(t);
    await identify(await c.key('live'), deviceValues(601));
    await identify(await c.key('live', second), deviceValues(602));
    await identify(await c.key('live', second), deviceValues(603));
    await identify(await stranger.key('live'), deviceValues(604));
    const one = async (who: Customer, projectId: string) => (await counts(who, `end=${t}&hours=1`, projectId)).hours[0]!.identifications;
    expect([await one(c, c.projectId), await one(c, second), await one(stranger, stranger.projectId)]).toEqual([1, 2, 1]);
    for (const projectId of [stranger.projectId, 'prj_01JD0S3V6ZQ8Y0K2W3ZP4X5Y6Z']) {
      const res = await hourly(c, '', projectId);
      expect([res.status, res.body.code]).toEqual([404, 'project_not_found']);
    }
  });

  it('count identifications as served: deleting their visitor later takes none off', async () => {
    const c = await signUp(h);
    const live = await c.key('live');
    const t = Date.UTC(2026, 1, 13, 9);
    h.clock.set(t);
    const seen = await request(h.app)
      .post('/v1/identify')
      .set('x-api-key', live)
      .send(identifyBody(deviceValues(701)));
    await identify(live, deviceValues(701));
    const deleted = await request(h.app)
      .delete(`/v1/visitors/${seen.body.visitorId}`)
      .set('authorization', `Bearer ${await c.key('secret')}`);
    expect(deleted.status).toBe(202);
    await (h.app.locals.services as { deletions: { idle(): Promise<void> } }).deletions.idle();
    expect((await c.agent.get(`/api/projects/${c.projectId}/events`)).body.events).toEqual([]);
    expect((await counts(c, `end=${t}&hours=1`)).hours[0]!.identifications).toBe(2);
  });

  it('hold up to 48 hours kept 48 hours: older hours read as zeros, and the sweep removes their days', async () => {
    const c = await signUp(h);
    const t = Date.UTC(2026, 1, 14, 10);
    h.clock.set(t);
    await identify(await c.key('live'), deviceValues(801));
    const window = await counts(c, `hours=${HOURLY_MAX_HOURS}`);
    expect(window.hours).toHaveLength(HOURLY_MAX_HOURS);
    expect(window.keptSince).toBe(t - (HOURLY_MAX_HOURS - 1) * HOUR);
    expect(window.hours.at(-1)).toEqual({ start: t, identifications: 1, bots: 0, suspects: 0 });
    for (const [query, error] of [
      // The contract's example of the 400.
      [`hours=${HOURLY_MAX_HOURS + 1}`, new RegExp(`^hours: Number must be less than or equal to ${HOURLY_MAX_HOURS}$`)],
      ['hours=0', /^hours: /],
      ['end=soon', /^end: /],
      ['start=0', /Unrecognized key.*start/],
    ] as const) {
      const res = await hourly(c, query);
      expect([res.status, res.body.code], query).toEqual([400, 'validation_failed']);
      expect(res.body.error, query).toMatch(error);
    }
    // A window ending before 1970 holds the hours since.
    expect((await counts(c, `end=${HOUR + 1}&hours=5`)).hours.map((x) => x.start)).toEqual([0, HOUR]);

    const mine = () => h.store.db.collection('usage').countDocuments({ _id: { $gt: `h|${c.projectId}|`, $lt: `h|${c.projectId}|~` } } as object);
    const sweep = defaultSweeps(h.store, h.config.retentionDays).hourlyCounts!;
    expect(await mine()).toBe(1);
    // Once the hour is older than the window's reach, it reads as zero; its day is removed 48 hours after it ended.
    h.clock.set(t + HOURLY_MAX_HOURS * HOUR);
    expect((await counts(c, `end=${t}&hours=1`)).hours[0]!.identifications).toBe(0);
    h.clock.set(Date.UTC(2026, 1, 15) + HOURLY_MAX_HOURS * HOUR - 1);
    await sweep(new Date(h.clock.now()));
    expect(await mine()).toBe(1);
    h.clock.set(Date.UTC(2026, 1, 15) + HOURLY_MAX_HOURS * HOUR);
    await sweep(new Date(h.clock.now()));
    expect(await mine()).toBe(0);
  });
});
