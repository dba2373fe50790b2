// GET /docs/<page>: the manual (the repository's docs/*.md), rendered to HTML
// on the server with marked, in the same chrome as the other pages. The set
// of pages is read once, at start; each page is rendered on its first request
// and kept. A page is found only by its name in that set (never by a path
// built from the request), so nothing else on disk can be reached; any other
// name falls through to the site's 404.
//
// The markdown is ours, and still no raw HTML of it reaches the page: HTML
// comments (the recipe markers) are dropped, any other raw HTML is shown as
// text. Links between pages (`search.md#paging`) become `/docs/search#paging`;
// links to repository files outside docs/ are kept as their text only, since
// the service does not serve them, and only http(s) and mailto links leave
// the site.
import { readdirSync, readFileSync } from 'node:fs';
import type { RequestHandler } from 'express';
import { Marked, type Token, type Tokens } from 'marked';
import { repoFile } from '../../paths.js';
import { escapeHtml, MANUAL_INDEX, pageHtml } from '../html.js';

/** Where the manual is served: `/docs/<page>`, beside the API reference at `/docs` itself. */
const MANUAL_PATH = '/docs';

const PAGE_NAME = /^[a-z0-9][a-z0-9-]*$/;

/** GitHub's heading anchors (github-slugger): lowercase, punctuation dropped but `-` and `_`, spaces as `-`. */
export function slug(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** A page's anchors in order: a repeated heading gets `-1`, `-2`… as on GitHub. */
function anchorMaker(): (text: string) => string {
  const seen = new Map<string, number>();
  return (text) => {
    const base = slug(text);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    return n === 0 ? base : `${base}-${n}`;
  };
}

/** The plain text of inline tokens (a heading's words, without the markup). */
function plain(tokens: Token[] | undefined): string {
  return (tokens ?? []).map((t) => ('tokens' in t && t.tokens ? plain(t.tokens) : 'text' in t ? String(t.text) : '')).join('');
}

/** The anchor of every heading of a markdown text, as GitHub and these pages give them. */
export function anchorsOf(markdown: string): Set<string> {
  const anchor = anchorMaker();
  const out = new Set<string>();
  const marked = new Marked({ gfm: true });
  void marked.walkTokens(marked.lexer(markdown), (t) => {
    if (t.type === 'heading') out.add(anchor(plain((t as Tokens.Heading).tokens)));
  });
  return out;
}

/** Where a link of a docs page goes on the site; null: nowhere (shown as text). */
export function siteHref(href: string): string | null {
  if (/^(https?:|mailto:)/i.test(href)) return href;
  if (href.startsWith('#')) return href;
  // A path of the service itself (`/openapi.json`), never another host (`//host`).
  if (href.startsWith('/') && !href.startsWith('//')) return href;
  const page = /^(?:\.\/)?([a-z0-9][a-z0-9-]*)\.md(#[^\s]*)?$/.exec(href);
  return page ? `${MANUAL_PATH}/${page[1]}${page[2] ?? ''}` : null;
}

export interface ManualPage {
  title: string;
  html: string;
}

/** Renders one page of the manual: its title (the first heading) and its HTML. */
export function renderManualPage(markdown: string): ManualPage {
  const anchor = anchorMaker();
  let title: string | undefined;
  const marked = new Marked({
    gfm: true,
    renderer: {
      heading({ tokens, depth }) {
        const text = plain(tokens);
        title ??= text;
        return `<h${depth} id="${escapeHtml(anchor(text))}">${this.parser.parseInline(tokens)}</h${depth}>\n`;
      },
      html({ text }) {
        return /^\s*<!--[\s\S]*-->\s*$/.test(text) ? '' : escapeHtml(text);
      },
      link({ href, title: linkTitle, tokens }) {
        const inner = this.parser.parseInline(tokens);
        const to = siteHref(href);
        if (to === null) return inner;
        return `<a href="${escapeHtml(to)}"${linkTitle ? ` title="${escapeHtml(linkTitle)}"` : ''}>${inner}</a>`;
      },
      image({ text }) {
        return escapeHtml(text);
      },
    },
    hooks: {
      // Wide tables and code scroll within the page rather than widening it (390 px
      // screens), and take the keyboard's focus so that they can be scrolled without a mouse.
      postprocess: (html) =>
        html
          .replace(/<table>/g, '<div class="table-scroll" tabindex="0"><table>')
          .replace(/<\/table>/g, '</table></div>')
          .replace(/<pre>/g, '<pre tabindex="0">'),
    },
  });
  const html = marked.parse(markdown, { async: false });
  return { title: title ?? 'Documentation', html };
}

/** The manual's pages by name (`search` for docs/search.md), read from disk once. */
let sources: Map<string, string> | undefined;
const rendered = new Map<string, string>();

function manualSources(): Map<string, string> {
  if (!sources) {
    const dir = repoFile('docs/');
    sources = new Map(
      readdirSync(dir)
        .filter((f) => f.endsWith('.md') && PAGE_NAME.test(f.slice(0, -3)))
        .map((f) => [f.slice(0, -3), readFileSync(new URL(f, dir), 'utf8')]),
    );
  }
  return sources;
}

/** The names of the manual's pages. */
export const manualPages = (): string[] => [...manualSources().keys()];

export function manualPage(): RequestHandler {
  manualSources();
  return (req, res, next) => {
    const name = req.params.page ?? '';
    const source = manualSources().get(name);
    if (source === undefined) {
      next();
      return;
    }
    let html = rendered.get(name);
    if (html === undefined) {
      const page = renderManualPage(source);
      html = pageHtml({
        title: `${page.title} · deviceid docs`,
        current: MANUAL_INDEX,
        body: `<main class="manual"><article class="panel doc">\n${page.html}</article></main>`,
      });
      rendered.set(name, html);
    }
    res.type('html').send(html);
  };
}
