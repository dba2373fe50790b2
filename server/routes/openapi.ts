import { buildOpenApi } from '../../openapi/generate.js';

/** Built once: the same document as openapi/openapi.json. */
export const openApiDocument = buildOpenApi();
