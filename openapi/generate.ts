// Derives the OpenAPI document from the contract. `npm run openapi` writes
// openapi/openapi.json; a test fails when the committed file drifts.
import { generateOpenApi } from '@ts-rest/open-api';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { contract, type RouteMeta } from '../contract/index.js';

const SECURITY: Record<RouteMeta['auth'], Array<Record<string, string[]>>> = {
  public: [],
  browserKey: [{ PublicKey: [] }],
  secretKey: [{ SecretKeyHeader: [] }],
  secretBearer: [{ SecretKeyBearer: [] }],
  session: [{ Session: [] }],
  admin: [{ Session: [] }],
};

export function buildOpenApi(serverUrl = 'http://localhost:8080') {
  return generateOpenApi(
    contract,
    {
      openapi: '3.0.2',
      info: {
        title: 'deviceid API',
        version: '1.0.0',
        description:
          'Self-hostable device identification: a browser agent posts signals to /v1/identify; backends read full events and visit history with a secret key; command-line tools obtain keys through a device code flow. Error bodies are `{error}`. IP Geolocation by DB-IP (https://db-ip.com), CC BY 4.0.',
        license: { name: 'UNLICENSED' },
      },
      servers: [{ url: serverUrl }],
      components: {
        securitySchemes: {
          PublicKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'A live (svc_live_) or test (svc_test_) key; safe to ship to browsers, restricted by the domain allowlist.' },
          SecretKeyHeader: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'A secret key (svc_secret_); server-side only.' },
          SecretKeyBearer: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer svc_secret_...; server-side only.' },
          Session: { type: 'apiKey', in: 'cookie', name: 'deviceid_session', description: 'Dashboard session cookie.' },
        },
      },
    },
    {
      setOperationId: true,
      operationMapper: (operation, route) => ({
        ...operation,
        security: SECURITY[(route.metadata as RouteMeta | undefined)?.auth ?? 'public'],
      }),
    },
  );
}

export function renderOpenApi(): string {
  return JSON.stringify(buildOpenApi(), null, 2) + '\n';
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const out = fileURLToPath(new URL('./openapi.json', import.meta.url));
  writeFileSync(out, renderOpenApi());
  console.log(`wrote ${out}`);
}
