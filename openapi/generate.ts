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
import { contract, type RouteMeta } from '../contract/index.js';
import { errorCode } from '../contract/errors.js';
import { repoFile } from '../server/paths.js';

export type Audience = 'public' | 'dashboard';

const c = initContract();
const { getGrant, authorizeGrant, denyGrant, ...toolSide } = contract.deviceFlow;

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
  }),
  dashboard: c.router({
    deviceFlow: { getGrant, authorizeGrant, denyGrant },
    account: contract.account,
    demo: contract.demo,
    admin: contract.admin,
    sealing: contract.sealing,
    webhooks: contract.webhooks,
    explorer: contract.explorer,
  }),
};

const SECURITY: Record<RouteMeta['auth'], Array<Record<string, string[]>>> = {
  public: [],
  browserKey: [{ PublicKey: [] }],
  secretKey: [{ SecretKeyHeader: [] }],
  secretBearer: [{ SecretKeyBearer: [] }],
  anyKey: [{ AnyKey: [] }],
  session: [{ Session: [] }],
  admin: [{ Session: [] }],
};

const SECURITY_SCHEMES = {
  PublicKey: {
    type: 'apiKey',
    in: 'header',
    name: 'X-API-Key',
    description: 'A live (svc_live_) or test (svc_test_) key; safe to ship to browsers, restricted by the domain allowlist.',
  },
  SecretKeyHeader: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'A secret key (svc_secret_); server-side only.' },
  SecretKeyBearer: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer svc_secret_...; server-side only.' },
  AnyKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'Any active key: live, test or secret.' },
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
    { name: 'health', description: 'Liveness and readiness probes.' },
  ],
  dashboard: [
    { name: 'deviceFlow', description: 'What the consent page reads and decides (signed-in user).' },
    { name: 'account', description: 'Sign-up, sign-in, the account, its usage, projects and keys (dashboard).' },
    { name: 'demo', description: 'What the demo page reads: a full event of the signed-in account.' },
    { name: 'sealing', description: "A project's sealed results: identify answers an encrypted blob its backend opens with the sealing key." },
    { name: 'webhooks', description: "A project's webhook endpoints, their delivery log and redelivery." },
    { name: 'explorer', description: "The events explorer: a project's events with search filters, and a visitor's timeline of visits." },
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
const RETRY_AFTER = header('Seconds to wait before retrying.', { type: 'integer', minimum: 0, example: 1 });
const RATE_LIMIT_HEADERS = {
  'X-RateLimit-Limit': header("The plan's limit that was hit: requests per second, or per calendar month (UTC).", { type: 'integer', example: 10 }),
  'X-RateLimit-Remaining': header('Requests left in the window: 0 on a 429.', { type: 'integer', example: 0 }),
  'X-RateLimit-Reset': header('Seconds until the window ends.', { type: 'integer', example: 1 }),
};

const unavailable = { error: 'Service temporarily unavailable; retry later', code: errorCode(503, 'Service temporarily unavailable; retry later') };

/** The real text of a 400 for an operation that has no route-specific one. */
function badRequestExample(op: Json): Json {
  const params = (op.parameters as Json[] | undefined) ?? [];
  const requiredQuery = params.find((p) => p.in === 'query' && p.required);
  const message = op.requestBody ? 'Invalid JSON body' : requiredQuery ? `${String(requiredQuery.name)}: Required` : 'Malformed percent-escape in the URL path';
  return { error: message, code: errorCode(400, message) };
}

/** `nullable` needs a `type` in OpenAPI 3.0 (and in Ajv): give it the one its other keywords imply. */
function fixNullable(node: unknown): void {
  if (Array.isArray(node)) return node.forEach(fixNullable);
  if (!node || typeof node !== 'object') return;
  const o = node as Json;
  if (o.nullable === true && o.type === undefined) {
    if (o.properties || o.additionalProperties) o.type = 'object';
    else if (o.items) o.type = 'array';
    else if (o.allOf || o.oneOf || o.anyOf) {
      const { nullable: _n, ...rest } = o;
      for (const k of Object.keys(o)) delete o[k];
      Object.assign(o, { anyOf: [rest, { type: 'object', nullable: true }] });
    } else o.type = 'object';
  }
  for (const v of Object.values(o)) fixNullable(v);
}

function finish(doc: Json): Json {
  const components = (doc.components ?? {}) as Json;
  components.schemas = { ...(components.schemas as Json | undefined), Error: errorSchema(doc) };
  const paths = doc.paths as Record<string, Record<string, Json>>;
  for (const [path, ops] of Object.entries(paths)) {
    for (const op of Object.values(ops)) {
      const id = String(op.operationId);
      if (op.requestBody) (op.requestBody as Json).required = true;
      const responses = op.responses as Record<string, Json>;
      // The database gate answers 503 to everything but the probes.
      if (!responses['503'] && path !== '/healthz') {
        responses['503'] = {
          description: 'The database cannot be reached right now; retry after `Retry-After` seconds.',
          content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
        };
      }
      for (const [status, response] of Object.entries(responses)) {
        const code = Number(status);
        const headers: Json = { 'X-Request-Id': REQUEST_ID };
        if (code === 429 || code === 503) headers['Retry-After'] = RETRY_AFTER;
        if (code === 429 && id === 'identify') Object.assign(headers, RATE_LIMIT_HEADERS);
        response.headers = headers;
        const media = (response.content as Record<string, Json> | undefined)?.['application/json'];
        if (!media) continue;
        const ref = (media.schema as Json | undefined)?.$ref as string | undefined;
        // A titled schema ts-rest put in components: its example is the response's.
        const schema = ref ? { example: componentSchema(doc, ref).example } : (media.schema as Json | undefined);
        if (code < 400) {
          // Missing only while openapi/capture-examples.ts has not run; a test requires one everywhere.
          if (examples.success[id] !== undefined) media.example = examples.success[id];
        } else if (code === 503 && id !== 'readyz') {
          media.example = unavailable;
        } else if (code === 400) {
          // A route's own 400 text (a cursor, a password), else the real text of the generic one.
          const own = schema?.example as Json | undefined;
          media.example = own && own.error !== 'Invalid JSON body' ? own : badRequestExample(op);
        } else if (schema?.example) {
          media.example = schema.example;
        } else if (id === 'readyz') {
          media.example = { error: 'Database not reachable', code: 'service_unavailable', database: { reachable: false } };
        }
        if (schema && !ref) delete schema.example;
      }
    }
  }
  fixNullable(doc);
  return doc;
}

function componentSchema(doc: Json, ref: string): Json {
  const name = ref.replace('#/components/schemas/', '');
  const found = ((doc.components as Json | undefined)?.schemas as Record<string, Json> | undefined)?.[name];
  if (!found) throw new Error(`no component ${ref}`);
  return found;
}

/** The Error schema, as one of the documents' own error responses has it (for the $refs added above). */
function errorSchema(doc: Json): Json {
  for (const ops of Object.values(doc.paths as Record<string, Record<string, Json>>)) {
    for (const op of Object.values(ops)) {
      const s = ((op.responses as Record<string, Json>)['401']?.content as Record<string, Json> | undefined)?.['application/json']?.schema as Json | undefined;
      if (s?.properties && (s.properties as Json).code) {
        const { description: _d, example: _e, ...rest } = s;
        return { ...rest, title: 'Error', description: 'Every error body carries a human-readable `error` and a machine-readable `code`.' };
      }
    }
  }
  throw new Error('no error response to take the Error schema from');
}

export interface OpenApiOptions {
  /** The service's public URL (BASE_URL); the committed files use the default. */
  serverUrl?: string;
  audience?: Audience;
}

export function buildOpenApi({ serverUrl = 'http://localhost:8080', audience = 'public' }: OpenApiOptions = {}): Json {
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
      servers: [{ url: serverUrl, description: 'This deviceid instance (BASE_URL)' }],
      tags: TAGS[audience],
      components: { securitySchemes: SECURITY_SCHEMES },
    },
    {
      setOperationId: true,
      operationMapper: (operation, route) => ({
        ...operation,
        security: SECURITY[(route.metadata as RouteMeta | undefined)?.auth ?? 'public'],
      }),
    },
  ) as unknown as Json;
  return finish(doc);
}

export const OPENAPI_FILES: Record<Audience, string> = { public: 'openapi.json', dashboard: 'dashboard.json' };

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
