// Captures one real request body and success answer per operation into openapi/examples.json
// (`npm run openapi:examples`, then `npm run openapi`): a throwaway instance
// on the dev database (or MONGODB_URI), driven through its HTTP API as a
// customer, a command-line tool and the administrator would. Keys in the
// answers are replaced by placeholders that fail their checksum, so secret
// scanners ignore them. test/openapi/openapi.test.ts checks every example against its
// response schema, so a contract change that outdates one fails there.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import request from 'supertest';
import { ManualClock } from '../server/clock.js';
import { loadConfig } from '../server/config.js';
import { startDevdb } from '../server/database.js';
import { loadEdge } from '../server/edge/analyze.js';
import { createApp } from '../server/http/app.js';
import { Store } from '../server/store/index.js';
import { deviceValues, identifyBody, inFirefox } from '../test/support/signals.js';

const dir = mkdtempSync(join(tmpdir(), 'deviceid-examples-'));
const db = process.env.MONGODB_URI ? undefined : await startDevdb({ dataDir: dir, devdb: { backend: 'sqlite', postgresqlUrl: undefined } });
const config = loadConfig({
  DATA_DIR: dir,
  LISTS_DIR: join(dir, 'no-lists'),
  SERVER_SECRET: 'examples-'.padEnd(40, 'x'),
  SIGNUP: 'invite',
  TRUST_PROXY: '1',
  LOG_LEVEL: 'silent',
  BASE_URL: 'http://localhost:8080',
});
const store = await Store.open({ uri: process.env.MONGODB_URI ?? db!.uri, dbName: `examples_${Date.now()}`, operationTimeoutMs: 5000 });
const clock = new ManualClock(Date.parse('2026-06-15T09:30:00Z'));
const logger = pino({ level: 'silent' });
const edge = await loadEdge(config, logger);
const app = createApp({ config, store, clock, logger, edge });
const origin = new URL(config.baseUrl).origin;

/** What Chrome sends with the agent's request, so that the example is a person's visit. */
const BROWSER_HEADERS = {
  'sec-ch-ua': '"Chromium";v="130", "Google Chrome";v="130", "Not?A_Brand";v="99"',
  'sec-ch-ua-mobile': '?0',
  'sec-ch-ua-platform': '"macOS"',
  'User-Agent': 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36',
  Accept: '*/*',
  'Sec-Fetch-Site': 'same-site',
  'Sec-Fetch-Mode': 'cors',
  'Sec-Fetch-Dest': 'empty',
  'Accept-Encoding': 'gzip, deflate, br, zstd',
  'Accept-Language': 'en-GB,en;q=0.9',
  'X-Forwarded-For': '86.8.23.155',
};

const success: Record<string, unknown> = {};
const requests: Record<string, unknown> = {};
async function take(id: string, res: request.Response, status = 200): Promise<any> {
  if (res.status !== status) throw new Error(`${id}: ${res.status} ${JSON.stringify(res.body)}`);
  success[id] = res.body;
  // The JSON body the request sent (superagent keeps it as `_data`).
  const sent = (res as unknown as { request?: { _data?: unknown } }).request?._data;
  if (sent !== undefined && typeof sent === 'object') requests[id] = sent;
  clock.advance(1500);
  return res.body;
}

try {
  const admin = request.agent(app);
  await take(
    'signup',
    await admin.post('/api/auth/signup').set('origin', origin).send({ email: 'ada@example.com', password: 'correct horse battery staple', name: 'Ada' }),
    201,
  );
  await take('logout', await admin.post('/api/auth/logout').set('origin', origin).send({}), 204);
  await take('login', await admin.post('/api/auth/login').set('origin', origin).send({ email: 'ada@example.com', password: 'correct horse battery staple' }));
  const projects = await take('listProjects', await admin.get('/api/projects'));
  const projectId: string = projects.projects[0].id;
  await take(
    'updateProject',
    await admin
      .patch(`/api/projects/${projectId}`)
      .set('origin', origin)
      .send({ allowedDomains: ['shop.example.com', '*.example.com'] }),
  );
  await take('createProject', await admin.post('/api/projects').set('origin', origin).send({ name: 'Staging' }), 201);
  const live = (await take('createKey', await admin.post(`/api/projects/${projectId}/keys`).set('origin', origin).send({ name: 'Website', type: 'live' }), 201))
    .key;
  const secret = (await admin.post(`/api/projects/${projectId}/keys`).set('origin', origin).send({ name: 'Backend', type: 'secret' })).body.key;
  const spare = (await admin.post(`/api/projects/${projectId}/keys`).set('origin', origin).send({ name: 'Old', type: 'test' })).body.apiKey.id;
  await take('revokeKey', await admin.delete(`/api/projects/${projectId}/keys/${spare}`).set('origin', origin));
  await take('createInvitation', await admin.post('/api/admin/invitations').set('origin', origin).send({ email: 'grace@example.com' }), 201);
  const other = (await admin.post('/api/admin/invitations').set('origin', origin).send({})).body.invitation.id;
  await take('revokeInvitation', await admin.delete(`/api/admin/invitations/${other}`).set('origin', origin));
  await take('listInvitations', await admin.get('/api/admin/invitations'));
  const accounts = await take('listAccounts', await admin.get('/api/admin/accounts'));
  await take('setAccountPlan', await admin.put(`/api/admin/accounts/${accounts.accounts[0].id}/plan`).set('origin', origin).send({ plan: 'builder' }));
  await take('setPlan', await admin.put('/api/account/plan').set('origin', origin).send({ plan: 'growth' }));

  // A team: Grace is invited as an analyst, joins by signing up, and is promoted; a second account of Ada's own.
  const accountId: string = accounts.accounts[0].id;
  const invited = await take(
    'createMemberInvitation',
    await admin.post(`/api/accounts/${accountId}/invitations`).set('origin', origin).send({ email: 'grace@example.com', role: 'analyst' }),
    201,
  );
  const spareInvitation = (await admin.post(`/api/accounts/${accountId}/invitations`).set('origin', origin).send({ email: 'alan@example.com', role: 'viewer' }))
    .body.invitation.id;
  await take('revokeMemberInvitation', await admin.delete(`/api/accounts/${accountId}/invitations/${spareInvitation}`).set('origin', origin));
  const grace = request.agent(app);
  await grace
    .post('/api/auth/signup')
    .set('origin', origin)
    .send({ email: 'grace@example.com', password: 'a cobol compiler in 1959', name: 'Grace', invitation: new URL(invited.url).searchParams.get('invite') });
  await take('listMemberInvitations', await admin.get(`/api/accounts/${accountId}/invitations`));
  const graceId = (await admin.get(`/api/accounts/${accountId}/members`)).body.members[1].userId;
  await take('changeRole', await admin.patch(`/api/accounts/${accountId}/members/${graceId}`).set('origin', origin).send({ role: 'admin' }));
  await take('listMembers', await admin.get(`/api/accounts/${accountId}/members`));
  const graceOwn = request.agent(app);
  const ownInvite = (await admin.post('/api/admin/invitations').set('origin', origin).send({ email: 'grace.h@example.com' })).body.url;
  await graceOwn
    .post('/api/auth/signup')
    .set('origin', origin)
    .send({ email: 'grace.h@example.com', password: 'a cobol compiler in 1959', invitation: new URL(ownInvite).searchParams.get('invite') });
  const joinAda = (await admin.post(`/api/accounts/${accountId}/invitations`).set('origin', origin).send({ email: 'grace.h@example.com', role: 'viewer' })).body
    .url;
  await take(
    'acceptInvitation',
    await graceOwn
      .post('/api/invitations/accept')
      .set('origin', origin)
      .send({ invitation: new URL(joinAda).searchParams.get('invite') }),
  );
  await take('listMyAccounts', await graceOwn.get('/api/session/accounts'));
  const graceOwnAccount = (await graceOwn.get('/api/session/accounts')).body.accounts[0].id;
  await take('switchAccount', await graceOwn.put('/api/session/account').set('origin', origin).send({ accountId: graceOwnAccount }));
  await take(
    'removeMember',
    await admin.delete(`/api/accounts/${accountId}/members/${(await graceOwn.get('/api/account')).body.user.id}`).set('origin', origin),
  );

  // Webhooks and sealing in the dashboard (sealing off again before identify).
  await take('listWebhooks', await admin.get(`/api/projects/${projectId}/webhooks`));
  const hook = await take(
    'createWebhook',
    await admin.post(`/api/projects/${projectId}/webhooks`).set('origin', origin).send({ url: 'https://hooks.example.com/deviceid' }),
    201,
  );
  await take('rotateWebhookSecret', await admin.post(`/api/projects/${projectId}/webhooks/${hook.endpoint.id}/secret`).set('origin', origin).send({}), 201);
  await take('getSealing', await admin.get(`/api/projects/${projectId}/sealing`));
  await take('createSealingKey', await admin.post(`/api/projects/${projectId}/sealing/key`).set('origin', origin).send({}), 201);
  await take('disableSealing', await admin.delete(`/api/projects/${projectId}/sealing`).set('origin', origin));
  await take('createLinkedIdKey', await admin.post(`/api/projects/${projectId}/linked-id-key`).set('origin', origin).send({}), 201);
  await take('getLinkedIdKey', await admin.get(`/api/projects/${projectId}/linked-id-key`));
  await take('revokeLinkedIdKey', await admin.delete(`/api/projects/${projectId}/linked-id-key`).set('origin', origin));
  await take('getProxy', await admin.get(`/api/projects/${projectId}/proxy`));
  const proxySecret = (await take('createProxySecret', await admin.post(`/api/projects/${projectId}/proxy/secret`).set('origin', origin).send({}), 201)).secret;

  // Decisions, kept in code with the secret key: a list, and a ruleset that blocks it and reviews new visitors.
  const v1 = (method: 'get' | 'post' | 'put' | 'patch' | 'delete', path: string) => request(app)[method](path).set('authorization', `Bearer ${secret}`);
  await take('createList', await v1('post', '/v1/lists').send({ name: 'blocked-ips', kind: 'ip', description: 'Card testing, June' }), 201);
  await take(
    'changeListEntries',
    await v1('post', '/v1/lists/blocked-ips/entries').send({
      add: [
        { value: '203.0.113.0/24', note: 'card testing' },
        { value: '198.51.100.7', note: 'chargeback', expiresAt: clock.now() + 30 * 86_400_000 },
      ],
    }),
  );
  await take('updateList', await v1('patch', '/v1/lists/blocked-ips').send({ description: 'Card testing and chargebacks' }));
  await take('getList', await v1('get', '/v1/lists/blocked-ips'));
  await take('listEntries', await v1('get', '/v1/lists/blocked-ips/entries?limit=10'));
  await v1('post', '/v1/lists').send({ name: 'old', kind: 'country' });
  await take('deleteList', await v1('delete', '/v1/lists/old'));
  await take('listLists', await v1('get', '/v1/lists'));
  await take(
    'putRuleset',
    await v1('put', '/v1/ruleset').send({
      rules: [
        { id: 'block-bad-bots', name: 'Block bad bots', expression: "verdicts.bot.result && verdicts.bot.kind == 'bad'", action: 'block' },
        {
          id: 'blocked-ips',
          name: 'Blocked networks',
          expression: "inList('blocked-ips', ip)",
          action: 'block',
          response: { status: 403, headers: { 'content-type': 'application/json' }, body: '{"error":"Try again later"}' },
        },
        { id: 'review-new-checkout', name: 'Review first checkouts', expression: "newVisitor && urlPath.startsWith('/checkout')", action: 'review' },
        { id: 'watch-vpn', name: 'VPN (watching)', expression: 'verdicts.vpn.result', action: 'challenge', mode: 'test' },
      ],
      defaultAction: 'allow',
      baseVersion: 0,
    }),
  );
  await take('getRuleset', await v1('get', '/v1/ruleset'));

  // The browser agent, then a backend.
  const values = deviceValues(7);
  const body = identifyBody(values, {
    url: 'https://shop.example.com/checkout',
    referrer: 'https://shop.example.com/cart',
    linkedId: 'order-1042',
    tag: { cart: 'c_881', items: 3 },
  });
  body.timestamp = clock.now();
  const first = await take(
    'identify',
    await request(app).post('/v1/identify').set('x-api-key', live).set('origin', 'https://shop.example.com').set(BROWSER_HEADERS).send(body),
  );
  // The same machine in Firefox: a related visitor.
  await request(app)
    .post('/v1/identify')
    .set('x-api-key', live)
    .set('origin', 'https://shop.example.com')
    .set(BROWSER_HEADERS)
    .send({ ...identifyBody(inFirefox(values)), timestamp: clock.now() });
  // The same browser through the shop's first-party proxy (its device cookie set), then the proxy's figures.
  await request(app)
    .post('/v1/identify')
    .set('x-api-key', live)
    .set('origin', 'https://shop.example.com')
    .set(BROWSER_HEADERS)
    .set({
      'deviceid-proxy-secret': proxySecret,
      'deviceid-proxy-client-ip': '86.8.23.155',
      'deviceid-proxy-host': 'shop.example.com',
      'deviceid-proxy-proto': 'https',
    })
    .send(body);
  await take('getProxyTraffic', await admin.get(`/api/projects/${projectId}/proxy/traffic`));
  await take('revokeProxySecret', await admin.delete(`/api/projects/${projectId}/proxy/secret`).set('origin', origin));
  await take('getEvent', await request(app).get(`/v1/events/${first.requestId}`).set('authorization', `Bearer ${secret}`));
  await take('getRelatedVisitors', await request(app).get(`/v1/visitors/${first.visitorId}/related`).set('authorization', `Bearer ${secret}`));
  await take('updateEvent', await request(app).patch(`/v1/events/${first.requestId}`).set('authorization', `Bearer ${secret}`).send({ suspect: true }));
  await take('searchEvents', await request(app).get('/v1/events?linkedId=order-1042&limit=1').set('authorization', `Bearer ${secret}`));
  await take('previewRule', await v1('post', '/v1/ruleset/preview').send({ expression: "ipLocation.country == 'GB' && visitCount < 3" }));
  await take('getRuleStats', await v1('get', '/v1/ruleset/stats'));
  await take('getRulesetVersion', await v1('get', '/v1/ruleset/versions/1'));
  await take('listReviews', await v1('get', '/v1/reviews?limit=5'));
  await take('labelEvent', await v1('post', `/v1/events/${first.requestId}/label`).send({ verdict: 'legitimate', note: 'Called the customer' }));
  await take('exportLabels', await v1('get', '/v1/labels'));
  await take('claimEvent', await v1('post', `/v1/events/${first.requestId}/claim`).send({ maxAgeSeconds: 600 }));
  await take('getVisits', await request(app).get(`/v1/demo/visits/${first.visitorId}`).set('x-api-key', secret));
  await take('listDeliveries', await admin.get(`/api/projects/${projectId}/webhooks/${hook.endpoint.id}/deliveries`));
  await take(
    'redeliver',
    await admin.post(`/api/projects/${projectId}/webhooks/${hook.endpoint.id}/deliveries/${first.requestId}/redeliver`).set('origin', origin).send({}),
    202,
  );
  await take('deleteWebhook', await admin.delete(`/api/projects/${projectId}/webhooks/${hook.endpoint.id}`).set('origin', origin));
  await take('getAccount', await admin.get('/api/account'));
  await take('getUsage', await admin.get('/api/account/usage'));
  await take('listPlans', await admin.get('/api/plans'));
  await take('listKeys', await admin.get(`/api/projects/${projectId}/keys`));
  await take('getAccountEvent', await admin.get(`/api/events/${first.requestId}`));
  await take('updateAccountEvent', await admin.patch(`/api/events/${first.requestId}`).set('origin', origin).send({ suspect: false }));
  await take('listProjectEvents', await admin.get(`/api/projects/${projectId}/events?limit=1`));
  await take('getProjectHourly', await admin.get(`/api/projects/${projectId}/hourly?hours=3`));
  await take('getVisitorTimeline', await admin.get(`/api/visitors/${first.visitorId}`));
  await take('getProjectRelatedVisitors', await admin.get(`/api/projects/${projectId}/visitors/${first.visitorId}/related`));

  // A command-line tool and its user.
  const grant = await take(
    'createDeviceCode',
    await request(app).post('/api/cli/device-code').set('user-agent', 'acme-deploy/2.1.0 (linux)').send({ client_name: 'acme-deploy' }),
  );
  await take('getGrant', await admin.get(`/api/cli/grants/${grant.user_code}`));
  await take('listGrantAccounts', await admin.get('/api/cli/accounts'));
  await take('authorizeGrant', await admin.post(`/api/cli/grants/${grant.user_code}/authorize`).set('origin', origin).send({ accountId, projectId }));
  const token = await take('pollToken', await request(app).post('/api/cli/token').send({ device_code: grant.device_code }));
  await take('getSelf', await request(app).get('/v1/keys/self').set('x-api-key', token.api_key));
  await take('revokeSelf', await request(app).delete('/v1/keys/self').set('x-api-key', token.api_key));
  const denied = (await request(app).post('/api/cli/device-code').send({ client_name: 'acme-deploy' })).body;
  await take('denyGrant', await admin.post(`/api/cli/grants/${denied.user_code}/deny`).set('origin', origin).send({}));
  await take('deleteVisitor', await request(app).delete(`/v1/visitors/${first.visitorId}`).set('authorization', `Bearer ${secret}`), 202);
  await take('listAudit', await admin.get(`/api/accounts/${accountId}/audit?limit=3`));
  // Deleting the same device again from the dashboard answers the same job.
  await take('deleteAccountVisitor', await admin.delete(`/api/visitors/${first.visitorId}`).set('origin', origin), 202);
  await take('healthz', await request(app).get('/healthz'));
  const ready = await take('readyz', await request(app).get('/readyz'));
  ready.database = { reachable: true };

  // No real key or secret in a committed file (and no 204 body).
  delete success.logout;
  const text = JSON.stringify({ requests, success }, null, 2)
    .replace(/svc_(live|test|secret|proxy)_[0-9A-Za-z]{38}/g, (_m, type: string) => `svc_${type}_${'EXAMPLE0'.repeat(5).slice(0, 38)}`)
    .replace(/whsec_[0-9A-Za-z_-]{43}/g, `whsec_${'EXAMPLE0'.repeat(6).slice(0, 43)}`)
    .replace(/lid_[0-9A-Za-z_-]{43}/g, `lid_${'EXAMPLE0'.repeat(6).slice(0, 43)}`)
    .replace(/"key": "[0-9A-Za-z+/]{43}="/g, `"key": "${'EXAMPLE0'.repeat(6).slice(0, 43)}="`);
  writeFileSync(fileURLToPath(new URL('./examples.json', import.meta.url)), text + '\n');
  console.log(`wrote ${Object.keys(success).length} examples`);
} finally {
  edge.close();
  await store.dropDatabase();
  await store.close();
  await db?.stop();
  rmSync(dir, { recursive: true, force: true });
}
