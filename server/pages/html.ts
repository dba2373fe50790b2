// The HTML shell of our pages. Pages are static markup: their scripts fill
// in data with textContent only, so nothing user-supplied is ever parsed as
// HTML. `escapeHtml` is for the rare server-side value. The footer carries
// the attribution the DB-IP Lite licence (CC BY 4.0) requires on every page.
import { scriptPath, STYLESHEET_PATH, type ScriptName } from './assets.js';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

/** The manual's table of contents (server/pages/docs/manual.ts serves the manual under /docs). */
export const MANUAL_INDEX = '/docs/index';

/** The site's navigation: the manual, the API reference, the demo, the dashboard. */
const NAV: Array<[href: string, name: string]> = [
  [MANUAL_INDEX, 'Docs'],
  ['/docs', 'API reference'],
  ['/demo', 'Demo'],
  ['/dashboard', 'Dashboard'],
];

/** The header's navigation, `current` (an href of NAV) marked as the page's own. */
export const navHtml = (current?: string): string =>
  `<nav class="nav" aria-label="Site">${NAV.map(([href, name]) => `<a href="${href}"${href === current ? ' aria-current="page"' : ''}>${name}</a>`).join('')}</nav>`;

/** `current`: the navigation entry the page belongs to. Pages without a script say nothing of JavaScript. */
export function pageHtml({
  title,
  script,
  body,
  head = '',
  current,
}: {
  title: string;
  script?: ScriptName;
  body: string;
  head?: string;
  current?: string;
}): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<link rel="icon" href="/favicon.ico" sizes="32x32">
<link rel="stylesheet" href="${STYLESHEET_PATH}">
${script ? `<script src="${scriptPath(script)}" defer></script>\n` : ''}${head}</head>
<body>
<header class="top"><a class="brand" href="/">deviceid</a>${navHtml(current)}<span id="who" class="who" hidden></span></header>
${body}
${script ? '<noscript><p class="panel">This page needs JavaScript.</p></noscript>\n' : ''}<footer class="foot">IP Geolocation by <a href="https://db-ip.com">DB-IP</a></footer>
</body>
</html>
`;
}
