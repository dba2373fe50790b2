// GET /docs: the API reference, rendered from /openapi.json by Redoc (the
// standalone bundle of the `redoc` package, served from this service: no
// CDN). Redoc styles itself with inline <style> elements and runs its search
// in a blob: worker, so this page alone allows those in its CSP.
import { createRequire } from 'node:module';
import { readFile } from 'node:fs/promises';
import type { RequestHandler } from 'express';
import { navHtml } from '../html.js';
import { pageSecurity } from '../security.js';

export const REDOC_PATH = '/assets/redoc.standalone.js';
const REDOC_FILE = createRequire(import.meta.url).resolve('redoc/bundles/redoc.standalone.js');

let redoc: Promise<Buffer> | undefined;
export const redocScript = (): Promise<Buffer> => (redoc ??= readFile(REDOC_FILE));

export const docsSecurity = (baseUrl: string): RequestHandler =>
  pageSecurity(baseUrl, {
    styleSrc: ["'self'", "'unsafe-inline'"],
    fontSrc: ["'self'", 'data:'],
    workerSrc: ["'self'", 'blob:'],
    formAction: ["'none'"],
  });

const HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>API reference · deviceid</title>
<link rel="icon" href="/favicon.ico" sizes="32x32">
<link rel="stylesheet" href="/assets/pages.css">
</head>
<body class="docs">
<header class="top"><a class="brand" href="/">deviceid</a>${navHtml('/docs')}</header>
<redoc spec-url="/openapi.json" hide-download-button="false" native-scrollbars="true"></redoc>
<noscript><p class="panel">The reference needs JavaScript; the document itself is <a href="/openapi.json">/openapi.json</a>.</p></noscript>
<footer class="foot">IP Geolocation by <a href="https://db-ip.com">DB-IP</a></footer>
<script src="${REDOC_PATH}"></script>
</body>
</html>
`;

export const docsPage = (): RequestHandler => (_req, res) => {
  res.type('html').send(HTML);
};
