// The OpenAPI documents as openapi/*.json has them, with `servers` naming
// this instance's BASE_URL. They are read, not generated: openapi/generate.ts
// writes them from the contract (a test fails on drift), and the server
// needs no generator at run time.
import { readFileSync } from 'node:fs';
import { repoFile } from '../paths.js';

export type Audience = 'public' | 'dashboard';

/** Each audience's document under openapi/. */
export const OPENAPI_FILES: Record<Audience, string> = { public: 'openapi.json', dashboard: 'dashboard.json' };

const served = new Map<string, string>();

/** The document as JSON text, read once per audience and BASE_URL. */
export function openApiDocument(audience: Audience, baseUrl: string): string {
  const key = `${audience} ${baseUrl}`;
  let text = served.get(key);
  if (!text) {
    const doc = JSON.parse(readFileSync(repoFile(`openapi/${OPENAPI_FILES[audience]}`), 'utf8')) as { servers: { url: string }[] };
    text = JSON.stringify({ ...doc, servers: doc.servers.map((s) => ({ ...s, url: baseUrl })) });
    served.set(key, text);
  }
  return text;
}
