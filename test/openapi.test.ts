import SwaggerParser from '@apidevtools/swagger-parser';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { renderOpenApi } from '../openapi/generate.js';
import { createHarness } from './support/harness.js';

const committed = readFileSync(new URL('../openapi/openapi.json', import.meta.url), 'utf8');

describe('OpenAPI document', () => {
  it('openapi/openapi.json matches the contract (run `npm run openapi` after changing the contract)', () => {
    expect(committed).toBe(renderOpenApi());
  });

  it('is a valid OpenAPI 3 document', async () => {
    await expect(SwaggerParser.validate(JSON.parse(committed))).resolves.toBeTruthy();
  });

  it('covers every endpoint of the spec with its statuses and security', () => {
    const doc = JSON.parse(committed);
    const op = (path: string, method: string) => doc.paths[path]?.[method];
    expect(Object.keys(op('/v1/identify', 'post').responses)).toEqual(expect.arrayContaining(['200', '400', '401', '429', '500']));
    expect(op('/v1/identify', 'post').security).toEqual([{ PublicKey: [] }]);
    expect(Object.keys(op('/v1/events/{requestId}', 'get').responses)).toEqual(expect.arrayContaining(['200', '401', '404']));
    expect(op('/v1/events/{requestId}', 'get').security).toEqual([{ SecretKeyBearer: [] }]);
    expect(op('/v1/demo/visits/{visitorId}', 'get').security).toEqual([{ SecretKeyHeader: [] }]);
    expect(Object.keys(op('/api/cli/device-code', 'post').responses)).toContain('200');
    expect(Object.keys(op('/api/cli/token', 'post').responses)).toEqual(expect.arrayContaining(['200', '400', '410']));
    expect(op('/api/cli/token', 'post').security).toEqual([]);
    expect(op('/healthz', 'get')).toBeDefined();
    expect(op('/readyz', 'get')).toBeDefined();
  });

  it('is served at GET /openapi.json', async () => {
    const h = await createHarness(import.meta.filename);
    try {
      const res = await h.http().get('/openapi.json');
      expect(res.status).toBe(200);
      expect(res.body.paths).toEqual(JSON.parse(committed).paths);
    } finally {
      await h.close();
    }
  });
});
