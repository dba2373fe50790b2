// The dashboard page over HTTP: sign-in redirect, an address per dashboard
// page, security headers, its script, and the DB-IP attribution footer on
// every page.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIST_KINDS } from '../../../contract/decisions.js';
import { RULE_ACTIONS, RULE_FIELDS, RULE_FUNCTIONS } from '../../../contract/ruleFields.js';
import { RULE_TEMPLATES } from '../../../contract/ruleTemplates.js';
import { VIEWS } from '../../../server/pages/dashboard/views.js';
import { safeNext } from '../../../server/pages/next.js';
import { createHarness, type Harness } from '../../support/harness.js';
import { signUp } from '../../support/dashboard.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness(import.meta.filename);
});
afterAll(async () => {
  await h.close();
});

const SECURITY = {
  'content-security-policy': expect.stringMatching(/default-src 'none'.*script-src 'self'.*frame-ancestors 'none'/),
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
};
const FOOTER = 'IP Geolocation by <a href="https://db-ip.com">DB-IP</a>';

describe('dashboard page', () => {
  it('GET /dashboard without a session redirects to sign-in with /dashboard as `next`', async () => {
    const res = await h.http().get('/dashboard');
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe('/login?next=%2Fdashboard');
    expect(res.headers).toMatchObject(SECURITY);
    // The login page reads `next` back as the same path and sends a signed-in user there.
    const next = new URL(res.headers.location!, h.config.baseUrl).searchParams.get('next');
    expect(safeNext(next, new URL(h.config.baseUrl).origin)).toBe('/dashboard');
    const c = await signUp(h);
    const back = await c.agent.get(res.headers.location!);
    expect(back.status).toBe(303);
    expect(back.headers.location).toBe('/dashboard');
  });

  it('every dashboard page has its own address serving the same page; a deep link survives sign-in; other addresses are 404', async () => {
    const deep = '/dashboard/events?project=prj_x&vpn=true';
    const res = await h.http().get(deep);
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe(`/login?next=${encodeURIComponent(deep)}`);
    const c = await signUp(h);
    const shell = (await c.agent.get('/dashboard')).text;
    for (const path of [...Object.values(VIEWS).map((v) => v.path), '/dashboard/visitors/iq_01JD0S3V6ZQ8Y0K2W3ZP4X5Y6Z', '/dashboard/keys/', deep]) {
      const page = await c.agent.get(path);
      expect(page.status, path).toBe(200);
      expect(page.text, path).toBe(shell);
    }
    for (const path of ['/dashboard/nope', '/dashboard/visitors/nope', '/dashboard/keys/extra', '/dashboardx']) {
      expect((await c.agent.get(path)).status, path).toBe(404);
    }
  });

  it('GET /dashboard with an expired or forged session redirects too', async () => {
    const res = await h.http().get('/dashboard').set('cookie', 'deviceid_session=forged');
    expect(res.status).toBe(303);
  });

  it('GET /dashboard signed in serves static markup with security headers and the footer', async () => {
    const c = await signUp(h);
    const res = await c.agent.get('/dashboard');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/text\/html/);
    expect(res.headers).toMatchObject({ ...SECURITY, 'cache-control': 'no-store' });
    expect(res.text).toContain('<script src="/assets/dashboard.js" defer></script>');
    expect(res.text).toContain(FOOTER);
    // Static shell: no inline scripts or handlers, and nothing of the account in it.
    expect(res.text).not.toMatch(/<script>|\son\w+=|style=/);
    expect(res.text).not.toContain(c.accountId);
  });

  it('serves /assets/dashboard.js, a browser bundle of the page and the contract client', async () => {
    const res = await h.http().get('/assets/dashboard.js');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/javascript/);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.text).toContain('/api/account/usage');
    // The client carries each route's method and path, not zod nor the contract's schemas and documentation (150 KB with them).
    expect(res.text).not.toContain('Invalid input');
    expect(res.text).not.toContain('Widest supported color-gamut');
    expect(res.text.length).toBeLessThan(60_000);
    // Node's APIs stay out (the proxy setups shown to people name process.env.DEVICEID_PROXY_SECRET, as text).
    expect(res.text).not.toMatch(/\brequire\(|process\.env(?!\.DEVICEID_PROXY_SECRET)/);
  });

  it('the Rules, Lists and Review pages: in the navigation with the other project pages, their markup in the shell, choices from the contract', async () => {
    const c = await signUp(h);
    const shell = (await c.agent.get('/dashboard/rules?project=prj_x&rule=new&template=block-bad-bots')).text;
    expect(shell).toBe((await c.agent.get('/dashboard')).text);
    const start = shell.indexOf('<nav class="dash-nav"');
    const nav = shell.slice(start, shell.indexOf('</nav>', start));
    expect([...nav.matchAll(/data-view="(\w+)"/g)].map((m) => m[1])).toEqual(Object.keys(VIEWS));
    expect(nav).toContain('<a href="/dashboard/rules" data-view="rules">Rules</a>');
    expect(nav).toContain('<a href="/dashboard/lists" data-view="lists">Lists</a>');
    expect(nav).toContain('<a href="/dashboard/review" data-view="reviews">Review</a>');
    for (const view of ['rules', 'lists', 'reviews']) expect(shell).toContain(`<section id="view-${view}" class="view"`);
    const options = (id: string) => [...(new RegExp(`<select id="${id}">(.*?)</select>`).exec(shell)?.[1] ?? '').matchAll(/value="(\w+)"/g)].map((m) => m[1]);
    expect(options('rule-action')).toEqual([...RULE_ACTIONS]);
    expect(options('ruleset-default')).toEqual([...RULE_ACTIONS]);
    expect(options('list-kind')).toEqual([...LIST_KINDS]);
  });

  it('serves /assets/decisions.js, those pages loaded on first use: the field reference and templates, without the API client, the routes or zod', async () => {
    const res = await h.http().get('/assets/decisions.js');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/javascript/);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.text).toContain('deviceidDecisions');
    for (const f of [RULE_FIELDS.at(-1)!.description, RULE_FUNCTIONS.at(-1)!.example, RULE_TEMPLATES.at(-1)!.catches]) expect(res.text).toContain(f);
    // The dashboard's script hands over its client: no second one, nor the routes.
    expect(res.text).not.toContain('/api/account/usage');
    expect(res.text).not.toContain('multipart/form-data');
    expect(res.text).not.toContain('Invalid input');
    expect(res.text.length).toBeLessThan(45_000);
    // And the dashboard's own script loads it rather than carrying it.
    const dashboard = (await h.http().get('/assets/dashboard.js')).text;
    expect(dashboard).toContain('/assets/decisions.js');
    expect(dashboard).not.toContain(RULE_FIELDS.at(-1)!.description);
  });

  it('puts the DB-IP attribution on the login and consent pages too', async () => {
    const login = await h.http().get('/login');
    expect(login.status).toBe(200);
    expect(login.text).toContain(FOOTER);
    const c = await signUp(h);
    const consent = await c.agent.get('/cli/auth');
    expect(consent.status).toBe(200);
    expect(consent.text).toContain(FOOTER);
  });
});
