// Derives the OpenAPI documents from the contract. `npm run openapi` writes
// openapi/openapi.json (the public API: identify, events, visits, keys, the
// device code flow's tool side, health) and openapi/dashboard.json (the
// private operations of the dashboard, the consent page and administration);
// a test fails when the committed files drift. The server serves both with
// `servers` set to its BASE_URL.
//
// On top of what ts-rest derives, every document gets: required request
// bodies; `X-Request-Id` on every response, `Retry-After` on 429 and 503 and
// the rate-limit headers on identify's 429; the 503 the database gate answers;
// one example per response (a captured real answer for success, the real
// error text and code for errors, see openapi/examples.json); and no
// `nullable` without a `type`, so that Ajv and other JSON Schema tools compile
// every schema.
import { initContract, type AppRouter } from '@ts-rest/core';
import { generateOpenApi } from '@ts-rest/open-api';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { contract, responseDoc, type RouteMeta } from '../contract/index.js';
import { ERRORS } from '../contract/errors.js';
import { DEVICE_COOKIE, DEVICE_COOKIE_MAX_AGE_S } from '../contract/proxy.js';
import { repoFile } from '../server/paths.js';
import { OPENAPI_FILES, type Audience } from '../server/routes/openapi.js';

const c = initContract();
const { getGrant, listGrantAccounts, authorizeGrant, denyGrant, ...toolSide } = contract.deviceFlow;

/** Which document each part of the contract belongs to (a test checks every route is in exactly one). */
export const ROUTERS: Record<Audience, AppRouter> = {
  public: c.router({
    health: contract.health,
    identify: contract.identify,
    events: contract.events,
    visits: contract.visits,
    keys: contract.keys,
    visitors: contract.visitors,
    deviceFlow: toolSide,
    decisions: contract.decisions,
    enforcement: contract.enforcement,
  }),
  dashboard: c.router({
    deviceFlow: { getGrant, listGrantAccounts, authorizeGrant, denyGrant },
    account: contract.account,
    demo: contract.demo,
    admin: contract.admin,
    sealing: contract.sealing,
    linkedIds: contract.linkedIds,
    webhooks: contract.webhooks,
    explorer: contract.explorer,
    proxy: contract.proxy,
    members: contract.members,
    dashboardDecisions: contract.dashboardDecisions,
  }),
};

const SECURITY: Record<RouteMeta['auth'], Array<Record<string, string[]>>> = {
  public: [],
  browserKey: [{ BrowserKey: [] }],
  secretKey: [{ SecretKey: [] }],
  anyKey: [{ BrowserKey: [] }, { SecretKey: [] }],
  session: [{ Session: [] }],
  admin: [{ Session: [] }],
};

/** One scheme per kind of credential. */
const SECURITY_SCHEMES = {
  BrowserKey: {
    type: 'apiKey',
    in: 'header',
    name: 'X-API-Key',
    description:
      'A live (svc_live_) or test (svc_test_) key: identify, and a key describing itself. Safe to ship to browsers, restricted by the domain allowlist.',
  },
  SecretKey: {
    type: 'http',
    scheme: 'bearer',
    description:
      '`Authorization: Bearer svc_secret_...`: every server-side route. Server-side only. The same secret key is also accepted in `X-API-Key` on every one of these routes (the visit history has always taken it there); when both headers are sent, `Authorization` is used.',
  },
  Session: { type: 'apiKey', in: 'cookie', name: 'deviceid_session', description: 'Dashboard session cookie (set by POST /api/auth/login).' },
} as const;

const TAGS: Record<Audience, Array<{ name: string; description: string }>> = {
  public: [
    { name: 'identify', description: 'The browser agent identifies the device.' },
    { name: 'events', description: 'Full events, read and corrected by your backend with a secret key.' },
    { name: 'visits', description: "A visitor's recent visits." },
    { name: 'keys', description: 'The presented key describes or revokes itself (command-line tools).' },
    { name: 'visitors', description: 'Deleting everything stored about a visitor (a privacy request), with a secret key.' },
    { name: 'deviceFlow', description: 'Device code flow (RFC 8628 style) for command-line tools that need a key.' },
    {
      name: 'decisions',
      description:
        "The project's rules (CEL expressions over each event, versioned), its lists, the review queue and analysts' labels, with the project's secret key: keep them in code.",
    },
    { name: 'enforcement', description: 'Protected requests: a requestId claimed once for its decision (what `protect()` of deviceid/client calls).' },
    { name: 'health', description: 'Liveness and readiness probes.' },
  ],
  dashboard: [
    { name: 'deviceFlow', description: 'What the consent page reads and decides (signed-in user).' },
    { name: 'account', description: 'Sign-up, sign-in, the account, its usage, projects and keys (dashboard).' },
    { name: 'demo', description: 'What the demo page reads: a full event of the signed-in account.' },
    { name: 'sealing', description: "A project's sealed results: identify answers an encrypted blob its backend opens with the sealing key." },
    {
      name: 'linkedIds',
      description:
        "A project's linkedId key: its server signs the signed-in user's id with it, so that identify takes the linkedId as evidence (shown once, rotated, revoked).",
    },
    { name: 'webhooks', description: "A project's webhook endpoints, their delivery log and redelivery." },
    {
      name: 'explorer',
      description: "The events explorer: a project's events with search filters, a visitor's timeline of visits and its related visitors in a project.",
    },
    {
      name: 'proxy',
      description: "A project's first-party proxy: its proxy secret (shown once, rotated with a 24-hour overlap, revoked) and whether proxied traffic arrives.",
    },
    {
      name: 'members',
      description: "Teams: an account's members and their roles, invitations to join it, the session's current account, and the audit log.",
    },
    {
      name: 'dashboardDecisions',
      description: "The Rules, Lists and Review pages: a project's rules, lists and review queue (viewers read, analysts label, admins edit).",
    },
    { name: 'admin', description: "The instance administrator's invitations and plans." },
  ],
};

const DESCRIPTION: Record<Audience, string> = {
  public:
    "Self-hostable device identification: a browser agent posts signals to /v1/identify; backends read full events and visit history with a secret key; command-line tools obtain keys through a device code flow. Error bodies are `{error, code}`: `error` is for people, `code` is stable for programs. Every answer carries `X-Request-Id`. The dashboard's private operations are in a separate document (/openapi/dashboard.json). IP Geolocation by DB-IP (https://db-ip.com), CC BY 4.0.",
  dashboard:
    "Private operations of the deviceid dashboard, consent page and administration, authenticated with the session cookie. Not a public API: they may change with the pages that use them. State changes must be JSON and come from the service's own origin (CSRF). The public API is in /openapi.json.",
};

type Json = Record<string, unknown>;
interface Examples {
  /** A real request body per operation that takes one. */
  requests?: Record<string, unknown>;
  success: Record<string, unknown>;
}

// The checkout's file, from source or compiled (dist/openapi/).
const EXAMPLES_FILE = repoFile('openapi/examples.json');
const examples: Examples = existsSync(EXAMPLES_FILE) ? (JSON.parse(readFileSync(EXAMPLES_FILE, 'utf8')) as Examples) : { success: {} };

const header = (description: string, schema: Json = { type: 'string' }) => ({ description, schema });
const REQUEST_ID = header('Identifies this request in the server logs (and is the incident id of a 500).', {
  type: 'string',
  example: 'rid_01JD0S3V6ZQ8Y0K2W3ZP4X5Y6Z',
});
const RETRY_AFTER = header('Seconds to wait before retrying.', { type: 'integer', format: 'int32', minimum: 0, example: 1 });
const RATE_LIMIT_HEADERS = {
  'X-RateLimit-Limit': header(
    "The plan's limit this answer is counted against: a live key's monthly quota (per calendar month, UTC), a test key's requests per second; on a 429, the limit that was hit.",
    { type: 'integer', format: 'int64', example: 10000 },
  ),
  'X-RateLimit-Remaining': header('Requests left in that window (0 on a 429).', { type: 'integer', format: 'int64', example: 9958 }),
  'X-RateLimit-Reset': header('Seconds until that window ends.', { type: 'integer', format: 'int64', example: 1296000 }),
};

/** The probes take no body, but a GET with a JSON body is parsed like any other: their 400 is the body's. */
const PROBES = new Set(['/healthz', '/readyz']);

const DEVICE_COOKIE_HEADER = header(
  `Proxied requests only (a valid deviceid-proxy-secret): the device cookie on the customer's site, \`${DEVICE_COOKIE}=<signed device token>; Max-Age=${DEVICE_COOKIE_MAX_AGE_S}; Path=/; HttpOnly; SameSite=Lax\`, plus \`Secure\` when deviceid-proxy-proto is https. A proxy passes it on (adding a Domain when configured with one).`,
  {
    type: 'string',
    example: `${DEVICE_COOKIE}=1.q1Yd1b3pQ7yBv7mZ0x6Jtw.1Zl3dN2m3a8iJ3P4m2vYxg; Max-Age=${DEVICE_COOKIE_MAX_AGE_S}; Path=/; HttpOnly; SameSite=Lax; Secure`,
  },
);

const unavailable = { error: ERRORS.service_unavailable.text, code: 'service_unavailable' };

/** The real text of a 400 for an operation that has no route-specific one. */
function badRequestExample(op: Json): Json {
  const params = (op.parameters as Json[] | undefined) ?? [];
  const requiredQuery = params.find((p) => p.in === 'query' && p.required);
  if (op.requestBody) return { error: ERRORS.invalid_json.text, code: 'invalid_json' };
  if (requiredQuery) return { error: `${String(requiredQuery.name)}: Required`, code: 'validation_failed' };
  return { error: ERRORS.malformed_path.text, code: 'malformed_path' };
}

/**
 * `nullable` needs a `type` in OpenAPI 3.0 (and in Ajv): give it the one its
 * other keywords imply. A nullable component reference (ts-rest writes
 * `{nullable, allOf: [$ref]}`) becomes `{type: object, nullable, allOf:
 * [$ref]}`, which generators read as an optional pointer to that type.
 */
function fixNullable(node: unknown): void {
  if (Array.isArray(node)) return node.forEach(fixNullable);
  if (!node || typeof node !== 'object') return;
  const o = node as Json;
  if (o.nullable === true && o.type === undefined) {
    if (o.properties || o.additionalProperties) o.type = 'object';
    else if (o.items) o.type = 'array';
    else if (Array.isArray(o.allOf) && o.allOf.length === 1 && (o.allOf[0] as Json).$ref) o.type = 'object';
    else if (o.allOf || o.oneOf || o.anyOf) {
      const { nullable: _n, ...rest } = o;
      for (const k of Object.keys(o)) delete o[k];
      Object.assign(o, { anyOf: [rest, { type: 'object', nullable: true }] });
    } else o.type = 'object';
  }
  for (const v of Object.values(o)) fixNullable(v);
}

/**
 * A nullable reference is rendered `allOf: [$ref]` beside `nullable`, which
 * loses the description: such a property gets its component's, where
 * generators and readers look for a property's. (A plain `$ref` takes no
 * siblings in OpenAPI 3.0; its component describes it.)
 */
function describeWrappedRefs(node: unknown, schemas: Record<string, Json>): void {
  if (Array.isArray(node)) return node.forEach((n) => describeWrappedRefs(n, schemas));
  if (!node || typeof node !== 'object') return;
  const o = node as Json;
  for (const property of Object.values((o.properties ?? {}) as Record<string, Json>)) {
    const ref = Array.isArray(property.allOf) && property.allOf.length === 1 ? (property.allOf[0] as Json).$ref : undefined;
    if (property.description === undefined && typeof ref === 'string') property.description = schemas[ref.split('/').pop()!]?.description;
  }
  for (const v of Object.values(o)) describeWrappedRefs(v, schemas);
}

const INT32 = 2 ** 31;

/**
 * Every number gets a `format`, from the bounds the contract gives it:
 * integers within ±2^31 are `int32`, other integers (Unix ms times, counts)
 * `int64`, the rest `double`; an enum of whole numbers is an integer. So
 * generators pick int32/int64/float64, never float32 or a plain int.
 */
function addNumberFormats(node: unknown): void {
  if (Array.isArray(node)) return node.forEach(addNumberFormats);
  if (!node || typeof node !== 'object') return;
  const o = node as Json;
  if (o.type === 'number' && Array.isArray(o.enum) && o.enum.every((v) => Number.isInteger(v))) o.type = 'integer';
  if (o.type === 'integer' && o.format === undefined) {
    const lo = typeof o.minimum === 'number' ? o.minimum : -Infinity;
    const hi = typeof o.maximum === 'number' ? o.maximum : Infinity;
    o.format = lo >= -INT32 && hi < INT32 ? 'int32' : 'int64';
  } else if (o.type === 'number' && o.format === undefined) {
    o.format = 'double';
  }
  for (const v of Object.values(o)) addNumberFormats(v);
}

function finish(doc: Json, audience: Audience): Json {
  const paths = doc.paths as Record<string, Record<string, Json>>;
  for (const [path, ops] of Object.entries(paths)) {
    for (const op of Object.values(ops)) {
      const id = String(op.operationId);
      if (op.requestBody) {
        const body = op.requestBody as Json;
        const media = (body.content as Record<string, Json>)['application/json']!;
        const ref = (media.schema as Json | undefined)?.$ref;
        const component = typeof ref === 'string' ? ((doc.components as Json).schemas as Record<string, Json>)[ref.split('/').pop()!] : undefined;
        body.required = true;
        body.description = String(component?.description ?? op.summary);
        // A captured real request, else the component's own example.
        const example = examples.requests?.[id] ?? component?.example;
        if (example !== undefined) media.example = example;
      }
      // A header parameter's description (ts-rest leaves it in the schema) where generators look for it.
      for (const p of (op.parameters as Json[] | undefined) ?? []) {
        const schema = p.schema as Json | undefined;
        if (p.description === undefined && typeof schema?.description === 'string') {
          p.description = schema.description;
          delete schema.description;
        }
      }
      const responses = op.responses as Record<string, Json>;
      // The database gate answers 503 to everything but the probes, and the body budget (server/http/bodyBudget.ts) to requests with bodies.
      if (!responses['503'] && path !== '/healthz') {
        responses['503'] = {
          description:
            'The database cannot be reached right now, or the service is holding as many request bodies as it takes at once; retry after `Retry-After` seconds.',
          content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' }, example: unavailable } },
        };
      }
      for (const [status, response] of Object.entries(responses)) {
        const code = Number(status);
        const headers: Json = { 'X-Request-Id': REQUEST_ID };
        if (code === 429 || code === 503) headers['Retry-After'] = RETRY_AFTER;
        // Metering decides these: every identify answer that got that far carries them.
        if ((code === 200 || code === 429) && id === 'identify') Object.assign(headers, RATE_LIMIT_HEADERS);
        if (code === 200 && id === 'identify') headers['Set-Cookie'] = DEVICE_COOKIE_HEADER;
        response.headers = headers;
        const media = (response.content as Record<string, Json> | undefined)?.['application/json'];
        if (!media) continue;
        if (code < 400) {
          // Missing only while openapi/capture-examples.ts has not run; a test requires one everywhere.
          if (examples.success[id] !== undefined) media.example = examples.success[id];
        } else if (code === 400 && !PROBES.has(path) && (media.example as Json | undefined)?.error === 'Invalid JSON body') {
          // A route's own 400 text (a cursor, a password) stays; the generic one becomes the real text of this route.
          media.example = badRequestExample(op);
        } else if (id === 'readyz' && code === 503) {
          media.example = { error: 'Database not reachable', code: 'service_unavailable', database: { reachable: false } };
        } else if (media.example === undefined) {
          // A component with an example of its own (the token poll's 410).
          const ref = (media.schema as Json | undefined)?.$ref;
          if (typeof ref === 'string') media.example = ((doc.components as Json).schemas as Record<string, Json>)[ref.split('/').pop()!]?.example;
        }
      }
    }
  }
  const schemas = (doc.components as Json).schemas as Record<string, Json>;
  if (!schemas.Error) throw new Error(`the ${audience} document has no Error component`);
  addNumberFormats(doc);
  fixNullable(doc);
  describeWrappedRefs(doc, schemas);
  return doc;
}

export interface OpenApiOptions {
  /** The service's public URL (BASE_URL); the committed files use the default, `/` (the host serving the document). */
  serverUrl?: string;
  audience?: Audience;
}

export function buildOpenApi({ serverUrl = '/', audience = 'public' }: OpenApiOptions = {}): Json {
  const doc = generateOpenApi(
    ROUTERS[audience],
    {
      openapi: '3.0.3',
      info: {
        title: audience === 'public' ? 'deviceid API' : 'deviceid dashboard API (private)',
        version: '1.0.0',
        description: DESCRIPTION[audience],
        license: { name: 'Apache-2.0', url: 'https://www.apache.org/licenses/LICENSE-2.0' },
      },
      // The committed files name no host: the instance serving a document puts its BASE_URL here.
      servers: [{ url: serverUrl, description: 'This deviceid instance (BASE_URL)' }],
      tags: TAGS[audience],
      components: {
        securitySchemes:
          audience === 'public' ? { BrowserKey: SECURITY_SCHEMES.BrowserKey, SecretKey: SECURITY_SCHEMES.SecretKey } : { Session: SECURITY_SCHEMES.Session },
      },
    },
    {
      setOperationId: true,
      operationMapper: (operation, route) => {
        // Each response's description, and an error's example: the real text and code the route answers (contract/common.ts).
        for (const [status, schema] of Object.entries(route.responses)) {
          const documented = responseDoc(schema);
          const response = (operation.responses as Record<string, Json>)[status];
          if (!documented || !response) continue;
          response.description = documented.description;
          const media = (response.content as Record<string, Json> | undefined)?.['application/json'];
          if (documented.example !== undefined && media) media.example = documented.example;
        }
        const routeMeta = route.metadata as RouteMeta | undefined;
        // The role a session route needs (docs/accounts.md), for readers and generators alike.
        const role = routeMeta?.role ? { 'x-required-role': routeMeta.role } : {};
        return { ...operation, ...role, security: SECURITY[routeMeta?.auth ?? 'public'] };
      },
    },
  ) as unknown as Json;
  return finish(doc, audience);
}

export function renderOpenApi(audience: Audience = 'public'): string {
  return JSON.stringify(buildOpenApi({ audience }), null, 2) + '\n';
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const audience of ['public', 'dashboard'] as const) {
    const out = fileURLToPath(new URL(`./${OPENAPI_FILES[audience]}`, import.meta.url));
    writeFileSync(out, renderOpenApi(audience));
    console.log(`wrote ${out}`);
  }
}
