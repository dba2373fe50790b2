import { buildOpenApi, type Audience } from '../../openapi/generate.js';

const built = new Map<string, Record<string, unknown>>();

/** The documents as openapi/*.json has them, with `servers` naming this instance's BASE_URL; built once each. */
export function openApiDocument(audience: Audience, baseUrl: string): Record<string, unknown> {
  const key = `${audience} ${baseUrl}`;
  let doc = built.get(key);
  if (!doc) {
    doc = buildOpenApi({ audience, serverUrl: baseUrl });
    built.set(key, doc);
  }
  return doc;
}
