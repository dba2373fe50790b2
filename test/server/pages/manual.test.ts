// The manual served at /docs/<page>: every docs/*.md as an HTML page in the
// site's chrome and security headers, every link between them landing on a
// served page and heading, the site's 404 for anything else (no way out of
// docs/ by any spelling of a path), and no raw HTML of the markdown reaching
// a page.
import { readdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderManualPage } from '../../../server/pages/docs/manual.js';
import { createHarness, type Harness } from '../../support/harness.js';

const DOCS = new URL('../../../docs/', import.meta.url);
const PAGES = readdirSync(DOCS)
  .filter((f) => f.endsWith('.md'))
  .map((f) => f.slice(0, -3));

let h: Harness;
beforeAll(async () => {
  h = await createHarness(import.meta.filename);
});
afterAll(async () => {
  await h.close();
});

const SECURITY = {
  'content-security-policy': expect.stringMatching(/default-src 'none'.*script-src 'self'.*style-src 'self'.*frame-ancestors 'none'/),
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
};

/** Every href of a piece of HTML. */
const hrefs = (html: string) => [...html.matchAll(/<a [^>]*href="([^"]*)"/g)].map((m) => m[1]!.replace(/&amp;/g, '&'));
/** The rendered markdown of a served page (without the site's header and footer). */
const article = (html: string) => /<article class="panel doc">([\s\S]*)<\/article>/.exec(html)?.[1] ?? '';

describe('the manual at /docs/<page>', () => {
  it('serves every docs/*.md as a page of the site, titled by its first heading', async () => {
    expect(PAGES).toContain('index');
    for (const name of PAGES) {
      const res = await h.http().get(`/docs/${name}`);
      expect(res.status, name).toBe(200);
      expect(res.headers['content-type'], name).toMatch(/^text\/html/);
      expect(res.headers, name).toMatchObject(SECURITY);
      // The pages' policy, not the API reference's (Redoc's inline styles and blob: worker).
      expect(res.headers['content-security-policy'], name).not.toMatch(/unsafe-inline|blob:/);
      const h1 = /<h1 id="[^"]*">([\s\S]*?)<\/h1>/.exec(res.text)?.[1]?.replace(/<[^>]+>/g, '');
      expect(h1, name).toBeTruthy();
      expect(res.text, name).toContain(`<title>${h1} · deviceid docs</title>`);
      expect(res.text, name).toContain('<a href="/docs/index" aria-current="page">Docs</a>');
      expect(res.text, name).toContain('<link rel="stylesheet" href="/assets/pages.css">');
      expect(res.text, name).toContain('IP Geolocation by <a href="https://db-ip.com">DB-IP</a>');
      // Server-rendered: no script, so nothing says the page needs one.
      expect(res.text, name).not.toMatch(/<script|<noscript/);
      if (name !== 'index') expect(hrefs(article(res.text)), `${name} links back to the index`).toContain('/docs/index');
    }
  });

  it('every link within the site lands on a page that answers 200, at a heading it has', async () => {
    const pages = new Map<string, string>();
    const get = async (path: string) => {
      if (!pages.has(path)) {
        const res = await h.http().get(path);
        expect(res.status, path).toBe(200);
        pages.set(path, res.text);
      }
      return pages.get(path)!;
    };
    let checked = 0;
    for (const name of PAGES) {
      const from = `/docs/${name}`;
      const html = article(await get(from));
      expect(html, from).not.toBe('');
      for (const href of hrefs(html)) {
        if (/^(https?:|mailto:)/.test(href)) continue;
        expect(href, `${from} links to ${href}`).toMatch(/^[/#]/);
        const [path, anchor] = href.split('#') as [string, string | undefined];
        const target = await get(path || from);
        if (anchor) expect(target, `${from} links to ${href}`).toContain(`id="${anchor}"`);
        checked++;
      }
    }
    // The index links to every page.
    const index = hrefs(article(await get('/docs/index')));
    for (const name of PAGES.filter((p) => p !== 'index')) expect(index, name).toContain(`/docs/${name}`);
    expect(checked).toBeGreaterThan(PAGES.length * 2);
  });

  it('answers an unknown page, and every way out of docs/, with the site’s 404', async () => {
    const notFound = await h.http().get('/nowhere');
    expect(notFound.status).toBe(404);
    for (const path of [
      '/docs/nope',
      '/docs/Index',
      '/docs/index.md',
      '/docs/README',
      '/docs/..%2fpackage.json',
      '/docs/..%2f..%2fpackage.json',
      '/docs/%2e%2e%2fpackage.json',
      '/docs/%2e%2e/package.json',
      '/docs/%2e%2e/README',
      '/docs/..%5cpackage.json',
      '/docs/.%2e/.%2e/package.json',
      '/docs/index/..%2f..%2fpackage.json',
      '/docs/%2fetc%2fpasswd',
      '/docs/.',
      '/docs/..',
    ]) {
      const res = await h.http().get(path);
      expect(res.status, path).toBe(404);
      expect(res.body, path).toEqual(notFound.body);
      expect(res.text, path).not.toMatch(/workspaces|root:/);
    }
    // A malformed escape is a bad path, as everywhere on the site.
    expect((await h.http().get('/docs/%E0%A4%A')).status).toBe(400);
  });

  it('keeps the API reference at /docs', async () => {
    const res = await h.http().get('/docs');
    expect(res.status).toBe(200);
    expect(res.text).toContain('<redoc spec-url="/openapi.json"');
    expect(res.text).toContain('<a href="/docs" aria-current="page">API reference</a>');
    expect(res.text).toContain('<a href="/docs/index">Docs</a>');
  });
});

describe('rendering a page of the manual', () => {
  it('lets no raw HTML of the markdown through, and links only within the manual, the site or to the web', () => {
    const { title, html } = renderManualPage(
      [
        '# Title with `code`',
        '',
        '<script>alert(1)</script>',
        '',
        '<!-- recipe:nginx -->',
        '',
        'Inline <b onclick="alert(1)">bold</b>, <img src=x onerror=alert(1)>.',
        '',
        '[a script](javascript:alert(1)) [a file](../package.json) [another host](//evil.example/x) [a page](search.md#paging) [here](#title-with-code) [the spec](/openapi.json) [the web](https://cel.dev) ![an image](https://evil.example/x.png)',
        '',
        '## Title with `code`',
        '',
        '| a | b |',
        '|---|---|',
        '| 1 | 2 |',
      ].join('\n'),
    );
    expect(title).toBe('Title with code');
    expect(html).not.toMatch(/<(script|img|b)\b|<[^>]* on\w+=|<!--|javascript:|evil\.example/);
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).toContain('&lt;b onclick=&quot;alert(1)&quot;&gt;bold&lt;/b&gt;');
    expect(hrefs(html)).toEqual(['/docs/search#paging', '#title-with-code', '/openapi.json', 'https://cel.dev']);
    // Links that lead nowhere on the site keep their words.
    expect(html).toContain('a script a file another host');
    // Repeated headings get GitHub's anchors.
    expect(html).toContain('<h1 id="title-with-code">Title with <code>code</code></h1>');
    expect(html).toContain('<h2 id="title-with-code-1">Title with <code>code</code></h2>');
    expect(html).toContain('<div class="table-scroll" tabindex="0"><table>');
  });
});
