// The OpenAPI documents as third-party tools see them: no drift from the
// contract, 0 errors from swagger-parser and Redocly's recommended rules, every
// schema compiled by Ajv and every example valid against its schema, the
// documented error texts equal to what the server answers, and a client
// generated with openapi-typescript + openapi-fetch calling the live server.
import SwaggerParser from '@apidevtools/swagger-parser';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { Ajv } from 'ajv';
import addFormatsImport from 'ajv-formats';
import createClient from 'openapi-fetch';
import openapiTS, { astToString } from 'openapi-typescript';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contract } from '../../contract/index.js';
import { ERRORS, type ErrorCode } from '../../contract/errors.js';
import { renderOpenApi, ROUTERS } from '../../openapi/generate.js';
import { OPENAPI_FILES, type Audience } from '../../server/routes/openapi.js';
import { signUp, type Customer } from '../support/dashboard.js';
import { authorizeGrant } from '../support/deviceflow.js';
import { createHarness, type Harness } from '../support/harness.js';
import { listenApp, type Listening } from '../support/httpServer.js';
import { deviceValues, identifyBody } from '../support/signals.js';

const addFormats = addFormatsImport as unknown as (ajv: Ajv) => Ajv;
type Json = Record<string, any>;
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const AUDIENCES = ['public', 'dashboard'] as const;
const committed = Object.fromEntries(AUDIENCES.map((a) => [a, readFileSync(join(ROOT, 'openapi', OPENAPI_FILES[a]), 'utf8')])) as Record<Audience, string>;
const docs = Object.fromEntries(AUDIENCES.map((a) => [a, JSON.parse(committed[a])])) as Record<Audience, Json>;

function operations(doc: Json): Array<{ path: string; method: string; op: Json }> {
  return Object.entries(doc.paths as Record<string, Record<string, Json>>).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => ({ path, method, op })),
  );
}

/** `#/components/...` references replaced by what they point to (Ajv compiles one schema at a time). */
function inline(doc: Json, node: unknown): any {
  if (Array.isArray(node)) return node.map((n) => inline(doc, n));
  if (!node || typeof node !== 'object') return node;
  const o = node as Json;
  if (typeof o.$ref === 'string')
    return inline(
      doc,
      o.$ref
        .slice(2)
        .split('/')
        .reduce((at: Json, k: string) => at[k], doc),
    );
  return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, inline(doc, v)]));
}

function ajv(): Ajv {
  // strict: unknown keywords fail, except OpenAPI's annotations.
  const a = new Ajv({ strict: true, allErrors: true });
  addFormats(a);
  a.addVocabulary(['example', 'xml', 'externalDocs', 'discriminator', 'x-go-type']);
  return a;
}

describe.each(AUDIENCES)('the %s OpenAPI document', (audience) => {
  const doc = docs[audience];

  it(`openapi/${OPENAPI_FILES[audience]} matches the contract (run \`npm run openapi\` after changing the contract)`, () => {
    expect(committed[audience]).toBe(renderOpenApi(audience));
  });

  it('is valid for swagger-parser', async () => {
    await expect(SwaggerParser.validate(structuredClone(doc) as never)).resolves.toBeTruthy();
  });

  it("has 0 errors under Redocly's recommended rules", async () => {
    const config = await createConfig({ extends: ['recommended'] });
    const problems = await lintFromString({ source: committed[audience], absoluteRef: `/openapi/${OPENAPI_FILES[audience]}`, config });
    const found = problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`);
    // Neither errors nor warnings.
    expect(found).toEqual([]);
  });

  it('Ajv compiles every schema, and every example is valid against its schema', () => {
    const a = ajv();
    let compiled = 0;
    for (const [name, schema] of Object.entries(doc.components.schemas as Json)) {
      expect(() => a.compile(inline(doc, schema)), name).not.toThrow();
      compiled++;
    }
    for (const { path, method, op } of operations(doc)) {
      const bodies = [op.requestBody?.content?.['application/json'], ...Object.values(op.responses as Json).map((r: Json) => r.content?.['application/json'])];
      for (const media of bodies.filter(Boolean)) {
        const validate = a.compile(inline(doc, media.schema));
        compiled++;
        if (media.example !== undefined) expect(validate(media.example) ? [] : validate.errors, `${method} ${path} example`).toEqual([]);
      }
    }
    expect(compiled).toBeGreaterThan(50);
    const untyped: string[] = [];
    const walk = (node: unknown, at: string): void => {
      if (!node || typeof node !== 'object') return;
      const o = node as Json;
      if (o.nullable === true && o.type === undefined) untyped.push(at);
      for (const [k, v] of Object.entries(o)) walk(v, `${at}/${k}`);
    };
    walk(doc, '#');
    expect(untyped, '`nullable` without `type`').toEqual([]);
  });

  it('declares examples, headers and required bodies on every operation', () => {
    for (const { path, method, op } of operations(doc)) {
      const where = `${method} ${path}`;
      if (op.requestBody) expect(op.requestBody.required, where).toBe(true);
      for (const [status, response] of Object.entries(op.responses as Record<string, Json>)) {
        expect(response.headers?.['X-Request-Id'], `${where} ${status}`).toBeDefined();
        if (status === '429' || status === '503') expect(response.headers?.['Retry-After'], `${where} ${status}`).toBeDefined();
        const media = response.content?.['application/json'];
        if (!media) continue;
        expect(media.example, `${where} ${status} example`).toBeDefined();
        if (Number(status) >= 400 && media.example.error !== undefined) expect(media.example.code, `${where} ${status} code`).toMatch(/^[a-z_]+$/);
      }
    }
    // Every tag an operation carries is declared with a description (Redoc's menu shows them).
    const used = new Set(operations(doc).flatMap(({ op }) => op.tags as string[]));
    expect(new Set(doc.tags.map((t: Json) => t.name))).toEqual(used);
    for (const t of doc.tags) expect(t.description, t.name).toMatch(/\w/);
    const identify429 = docs.public.paths['/v1/identify'].post.responses['429'];
    expect(Object.keys(identify429.headers)).toEqual(
      expect.arrayContaining(['Retry-After', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']),
    );
  });
});

/** Every schema node of the document (components, parameters, bodies, responses, headers) with where it is. */
function schemaNodes(doc: Json): Array<{ at: string; node: Json; parent?: string }> {
  const out: Array<{ at: string; node: Json; parent?: string }> = [];
  const walk = (node: unknown, at: string, parent?: string): void => {
    if (!node || typeof node !== 'object' || Array.isArray(node)) return;
    const o = node as Json;
    out.push({ at, node: o, ...(parent === undefined ? {} : { parent }) });
    for (const [k, v] of Object.entries((o.properties ?? {}) as Json)) walk(v, `${at}.${k}`, at);
    for (const k of ['items', 'additionalProperties', 'not']) walk(o[k], `${at}[${k}]`, parent);
    for (const k of ['oneOf', 'anyOf', 'allOf']) ((o[k] ?? []) as unknown[]).forEach((v, i) => walk(v, `${at}/${k}/${i}`, parent));
  };
  for (const [name, schema] of Object.entries(doc.components.schemas as Json)) walk(schema, name);
  for (const { path, method, op } of operations(doc)) {
    for (const p of op.parameters ?? []) walk(p.schema, `${method} ${path} ${p.in} ${p.name}`);
    walk(op.requestBody?.content?.['application/json']?.schema, `${method} ${path} body`);
    for (const [status, r] of Object.entries(op.responses as Record<string, Json>)) {
      walk(r.content?.['application/json']?.schema, `${method} ${path} ${status}`);
      for (const [name, h] of Object.entries((r.headers ?? {}) as Json)) walk((h as Json).schema, `${method} ${path} ${status} ${name}`);
    }
  }
  return out;
}

describe('the public document as generators read it', () => {
  const doc = docs.public;
  const schemas = doc.components.schemas as Record<string, Json>;
  const nodes = schemaNodes(doc);
  // A plain `$ref` takes no siblings in OpenAPI 3.0: its component's description is the property's. Any other property (a nullable `allOf` reference too) has its own.
  const descriptionOf = (s: Json): unknown => (s.$ref ? schemas[String(s.$ref).split('/').pop()!]?.description : s.description);

  it('references one Error component from every error response (the readiness probe adds the database state)', () => {
    const errors = operations(doc).flatMap(({ path, method, op }) =>
      Object.entries(op.responses as Record<string, Json>)
        .filter(([status]) => Number(status) >= 400)
        .map(([status, r]) => [`${method} ${path} ${status}`, r.content?.['application/json']?.schema?.$ref]),
    );
    expect(errors.length).toBeGreaterThan(50);
    // Not errors: the probe's not-ready state, and the token poll's end of a grant (spec 4.2: a `status` body).
    const own: Record<string, string> = { 'get /readyz 503': 'NotReady', 'post /api/cli/token 410': 'TokenEnded' };
    for (const [where, ref] of errors) expect(ref, where).toBe(`#/components/schemas/${own[where] ?? 'Error'}`);
    expect(schemas.Error!.properties.code).toEqual({ $ref: '#/components/schemas/ErrorCode' });
    expect(schemas.ErrorCode!.enum).toContain('event_not_found');
  });

  it('names every object: no object with properties inside another schema', () => {
    const anonymous = nodes.filter(({ node, parent }) => parent !== undefined && node.properties !== undefined).map(({ at }) => at);
    const inlineTop = nodes.filter(({ at, node }) => / (body|\d{3})$/.test(at) && node.properties !== undefined).map(({ at }) => at);
    expect([...anonymous, ...inlineTop]).toEqual([]);
  });

  it('gives every number a format and every whole-number enum an integer type', () => {
    const numbers = nodes.filter(({ node }) => node.type === 'number' || node.type === 'integer');
    expect(numbers.length).toBeGreaterThan(100);
    for (const { at, node } of numbers) {
      expect(node.format, at).toMatch(node.type === 'number' ? /^double$/ : /^int(32|64)$/);
      if (node.enum) expect(node.type, at).toBe('integer');
    }
    expect(schemas.IpLocation!.properties.latitude.format).toBe('double');
    expect(schemas.IdentifyResult!.properties.timestamp.format).toBe('int64');
  });

  it('types every property, query booleans as booleans', () => {
    for (const { at, node } of nodes) expect(node.type ?? node.$ref ?? node.oneOf ?? node.allOf, at).toBeDefined();
    const query = doc.paths['/v1/events'].get.parameters as Json[];
    for (const name of ['suspect', 'vpn', 'tor', 'reverse', 'proxy', 'incognito', 'tampering', 'virtualMachine', 'devtools', 'ipBlocklist']) {
      expect(query.find((p) => p.name === name)?.schema, name).toEqual({ type: 'boolean' });
    }
    expect(query.find((p) => p.name === 'start')?.schema).not.toHaveProperty('nullable');
  });

  it('describes every operation, response, parameter, property and component, with an example on every request body', () => {
    for (const [name, schema] of Object.entries(schemas)) expect(schema.description, name).toMatch(/\w/);
    for (const { at, node } of nodes) {
      for (const [k, v] of Object.entries((node.properties ?? {}) as Record<string, Json>)) {
        expect(descriptionOf(v), `${at}.${k}`).toMatch(/\w/);
      }
    }
    for (const { path, method, op } of operations(doc)) {
      const where = `${method} ${path}`;
      expect(op.summary, where).toMatch(/\w/);
      for (const p of op.parameters ?? []) expect(p.description, `${where} ${p.name}`).toMatch(/\w/);
      for (const [status, r] of Object.entries(op.responses as Record<string, Json>)) expect(r.description, `${where} ${status}`).not.toMatch(/^\d+$/);
      if (op.requestBody) {
        expect(op.requestBody.description, where).toMatch(/\w/);
        expect(op.requestBody.content['application/json'].example, `${where} request example`).toBeDefined();
      }
    }
  });

  it('discriminates the unions: identify by `kind`, the token poll by `status`', () => {
    const unions = nodes.filter(({ node }) => node.oneOf || node.anyOf);
    expect(unions.map(({ at }) => at).sort()).toEqual(['post /api/cli/token 200', 'post /v1/identify 200']);
    expect(doc.paths['/v1/identify'].post.responses['200'].content['application/json'].schema.discriminator).toEqual({
      propertyName: 'kind',
      mapping: { result: '#/components/schemas/IdentifyResult', sealed: '#/components/schemas/SealedIdentifyResult' },
    });
    expect(doc.paths['/api/cli/token'].post.responses['200'].content['application/json'].schema.discriminator).toEqual({
      propertyName: 'status',
      mapping: { pending: '#/components/schemas/TokenPending', authorized: '#/components/schemas/TokenAuthorized' },
    });
  });

  it('declares one scheme per kind of key, secret routes taking the secret key, rate-limit headers on identify', () => {
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(['BrowserKey', 'SecretKey']);
    for (const { path, method, op } of operations(doc)) {
      if (/^\/v1\/(events|demo|visitors)/.test(path)) expect(op.security, `${method} ${path}`).toEqual([{ SecretKey: [] }]);
    }
    for (const status of ['200', '429']) {
      const headers = doc.paths['/v1/identify'].post.responses[status].headers;
      expect(Object.keys(headers), status).toEqual(expect.arrayContaining(['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']));
    }
    expect(schemas.VisitHistory!.properties.paginationKey).toBeDefined();
    expect(schemas.EventSearchResult!.properties.paginationKey).toBeDefined();
  });
});

describe('the two documents', () => {
  it('hold every route of the contract exactly once; the public one has no dashboard operation', () => {
    const ids = (doc: Json) => operations(doc).map(({ op }) => op.operationId as string);
    const all = (router: object): string[] => Object.entries(router).flatMap(([k, r]: [string, any]) => (typeof r.method === 'string' ? [k] : all(r)));
    expect([...ids(docs.public), ...ids(docs.dashboard)].sort()).toEqual(all(contract).sort());
    expect(all(ROUTERS.public).sort()).toEqual(ids(docs.public).sort());
    for (const { path } of operations(docs.public)) expect(path).not.toMatch(/^\/api\/(account|admin|auth|projects|cli\/grants)/);
  });

  it("document every error with a code of the table that belongs to the response's status, and the table's text where it fixes one", () => {
    let checked = 0;
    for (const audience of AUDIENCES) {
      for (const { path, method, op } of operations(docs[audience])) {
        for (const [status, r] of Object.entries(op.responses as Record<string, Json>)) {
          const media = r.content?.['application/json'] as Json | undefined;
          const example = media?.example as Json | undefined;
          if (Number(status) < 400 || media?.schema?.$ref !== '#/components/schemas/Error' || typeof example?.code !== 'string') continue;
          const entry: { status: number; text?: string } | undefined = ERRORS[example.code as ErrorCode];
          expect(entry?.status, `${method} ${path} ${status}: ${example.code}`).toBe(Number(status));
          if (entry?.text !== undefined) expect(example.error, `${method} ${path} ${status}`).toBe(entry.text);
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(150);
  });

  it('describe every component and property, the dashboard document too', () => {
    for (const audience of AUDIENCES) {
      const doc = docs[audience];
      const schemas = doc.components.schemas as Record<string, Json>;
      const descriptionOf = (s: Json): unknown => (s.$ref ? schemas[String(s.$ref).split('/').pop()!]?.description : s.description);
      for (const [name, schema] of Object.entries(schemas)) expect(schema.description, `${audience} ${name}`).toMatch(/\w/);
      for (const { at, node } of schemaNodes(doc)) {
        for (const [k, v] of Object.entries((node.properties ?? {}) as Record<string, Json>)) {
          expect(descriptionOf(v), `${audience} ${at}.${k}`).toMatch(/\w/);
        }
      }
    }
  });

  it('cover the spec endpoints with their statuses and security', () => {
    const op = (path: string, method: string) => docs.public.paths[path]?.[method];
    expect(Object.keys(op('/v1/identify', 'post').responses)).toEqual(expect.arrayContaining(['200', '400', '401', '429', '500', '503']));
    expect(op('/v1/identify', 'post').security).toEqual([{ BrowserKey: [] }]);
    expect(Object.keys(op('/v1/events/{requestId}', 'get').responses)).toEqual(expect.arrayContaining(['200', '401', '404']));
    expect(op('/v1/events/{requestId}', 'get').security).toEqual([{ SecretKey: [] }]);
    expect(op('/v1/demo/visits/{visitorId}', 'get').security).toEqual([{ SecretKey: [] }]);
    expect(op('/v1/keys/self', 'get').security).toEqual([{ BrowserKey: [] }, { SecretKey: [] }]);
    expect(Object.keys(op('/api/cli/token', 'post').responses)).toEqual(expect.arrayContaining(['200', '400', '410']));
    expect(op('/api/cli/token', 'post').security).toEqual([]);
    expect(op('/healthz', 'get')).toBeDefined();
    expect(docs.public.info.license.name).toBe('Apache-2.0');
  });
});

describe('against the live server', () => {
  let h: Harness;
  let srv: Listening;
  let c: Customer;
  let live: string;
  let secret: string;
  beforeAll(async () => {
    h = await createHarness(import.meta.filename, { BASE_URL: 'http://id.example.org:8080' });
    srv = await listenApp(h.app);
    c = await signUp(h);
    live = await c.key('live');
    secret = await c.key('secret');
  });
  afterAll(async () => {
    await srv.close();
    await h.close();
  });

  it('serves both documents with servers from BASE_URL', async () => {
    const pub = await h.http().get('/openapi.json').expect(200);
    expect(pub.body.servers).toEqual([{ url: 'http://id.example.org:8080', description: expect.any(String) }]);
    expect(pub.body.paths).toEqual(docs.public.paths);
    const dash = await h.http().get('/openapi/dashboard.json').expect(200);
    expect(dash.body.servers[0].url).toBe('http://id.example.org:8080');
    expect(dash.body.paths).toEqual(docs.dashboard.paths);
  });

  it('answers errors with exactly the documented text and code', async () => {
    const example = (path: string, method: string, status: number) => docs.public.paths[path][method].responses[status].content['application/json'].example;
    const body = identifyBody(deviceValues(5));
    const cases: Array<[string, string, number, Promise<{ status: number; body: unknown }>]> = [
      ['/v1/identify', 'post', 401, h.http().post('/v1/identify').send(body)],
      ['/v1/identify', 'post', 400, h.http().post('/v1/identify').set('x-api-key', live).set('content-type', 'application/json').send('{"signals":')],
      ['/v1/events/{requestId}', 'get', 401, h.http().get('/v1/events/req_x')],
      ['/v1/events/{requestId}', 'get', 404, h.http().get('/v1/events/req_01JD0S3V6ZQ8Y0K2W3ZP4X5Y6Z').set('authorization', `Bearer ${secret}`)],
      ['/v1/demo/visits/{visitorId}', 'get', 404, h.http().get('/v1/demo/visits/iq_01JD0S3V6ZQ8Y0K2W3ZP4X5Y6Z').set('x-api-key', secret)],
      ['/v1/keys/self', 'get', 401, h.http().get('/v1/keys/self')],
      ['/v1/keys/self', 'delete', 403, h.http().delete('/v1/keys/self').set('x-api-key', live)],
      ['/api/cli/token', 'post', 400, h.http().post('/api/cli/token').send({ device_code: 'nope' })],
    ];
    for (const [path, method, status, pending] of cases) {
      const res = await pending;
      expect([res.status, res.body], `${method} ${path}`).toEqual([status, example(path, method, status)]);
    }
    // The visit cursor: the real message, whatever the visitor.
    const id = await h.http().post('/v1/identify').set('x-api-key', live).send(body).expect(200);
    const cursor = await h.http().get(`/v1/demo/visits/${id.body.visitorId}?before=nope`).set('x-api-key', secret);
    expect(cursor.body).toEqual(example('/v1/demo/visits/{visitorId}', 'get', 400));
  });

  it('a client generated with openapi-typescript + openapi-fetch type-checks and calls identify, events, visits and the device flow', async () => {
    const types = astToString(await openapiTS(structuredClone(docs.public) as never));
    const dir = join(ROOT, 'node_modules', '.cache', 'openapi-client');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'api.d.ts'), types);
    writeFileSync(
      join(dir, 'use.ts'),
      `import createClient from 'openapi-fetch';
import type { paths } from './api.js';
export async function use(baseUrl: string, apiKey: string, secretKey: string, body: paths['/v1/identify']['post']['requestBody']['content']['application/json']) {
  const api = createClient<paths>({ baseUrl });
  const { data, error } = await api.POST('/v1/identify', { body, headers: { 'X-API-Key': apiKey } });
  if (error) return error.code;
  if ('sealedResult' in data) return 'sealed';
  const visitor: string = data.visitorId;
  const event = await api.GET('/v1/events/{requestId}', { params: { path: { requestId: data.requestId } }, headers: { Authorization: 'Bearer ' + secretKey } });
  const bot: boolean | undefined = event.data?.verdicts.bot.result;
  return [visitor, bot];
}
`,
    );
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          noEmit: true,
          module: 'nodenext',
          moduleResolution: 'nodenext',
          target: 'ES2022',
          lib: ['ES2023', 'DOM'],
          types: [],
          skipLibCheck: false,
        },
        files: ['use.ts'],
      }),
    );
    const tsc = spawnSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(dir, 'tsconfig.json')], { encoding: 'utf8' });
    expect(tsc.stdout + tsc.stderr).toBe('');

    type Paths = Record<string, any>;
    const api = createClient<Paths>({ baseUrl: srv.url });
    const identified = await api.POST('/v1/identify', { body: identifyBody(deviceValues(6)), headers: { 'X-API-Key': live } });
    expect(identified.response.status).toBe(200);
    const requestId = (identified.data as Json).requestId;
    const event = await api.GET('/v1/events/{requestId}', { params: { path: { requestId } }, headers: { Authorization: `Bearer ${secret}` } });
    expect((event.data as Json).requestId).toBe(requestId);
    const visits = await api.GET('/v1/demo/visits/{visitorId}', {
      params: { path: { visitorId: (event.data as Json).visitorId } },
      headers: { 'X-API-Key': secret },
    });
    expect((visits.data as Json).totalVisits).toBe(1);
    const missing = await api.GET('/v1/events/{requestId}', {
      params: { path: { requestId: 'req_01JD0S3V6ZQ8Y0K2W3ZP4X5Y6Z' } },
      headers: { Authorization: `Bearer ${secret}` },
    });
    expect(missing.error).toEqual({ error: 'Event not found', code: 'event_not_found' });
    expect(missing.response.headers.get('x-request-id')).toMatch(/^rid_/);

    const started = await api.POST('/api/cli/device-code', { body: { client_name: 'openapi-fetch' } });
    const grant = started.data as Json;
    await authorizeGrant(c, grant.user_code).expect(200);
    const token = await api.POST('/api/cli/token', { body: { device_code: grant.device_code } });
    expect(token.data).toMatchObject({ status: 'authorized', api_key: expect.stringMatching(/^svc_live_/) });
    const self = await api.GET('/v1/keys/self', { headers: { 'X-API-Key': (token.data as Json).api_key } });
    expect((self.data as Json).apiKey).toMatchObject({ source: 'cli', name: 'openapi-fetch (CLI)', status: 'active' });
  }, 60_000);
});
