// No link of the project's README, the manual (docs/*.md) or a package's
// README leads nowhere: a relative link names a file or folder that exists
// (and a heading of it that exists), a link to the manual as the service
// serves it (`/docs/<page>`) names a page of docs/ and a heading of that page,
// and a package's README, which npm shows apart from the repository, links
// only to the web or to files the package ships (its `files`). Mentions of a
// manual page in code (`/docs/proxy`) are held to the same rule. Links to the
// web are not followed (no network in tests).
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Marked, type Token } from 'marked';
import { describe, expect, it } from 'vitest';
import { anchorsOf } from '../../server/pages/docs/manual.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PACKAGES = ['contract', 'clients/node', 'clients/cli', 'clients/agent', 'clients/proxy'];
const MANUAL = readdirSync(join(ROOT, 'docs'))
  .filter((f) => f.endsWith('.md'))
  .map((f) => `docs/${f}`);

interface Reference {
  href: string;
  /** A link, or a manual page named in a code span. */
  kind: 'link' | 'code';
}

/** The links of a markdown text, and the manual pages its code spans name. */
function references(markdown: string): Reference[] {
  const out: Reference[] = [];
  const marked = new Marked({ gfm: true });
  void marked.walkTokens(marked.lexer(markdown), (t: Token) => {
    if (t.type === 'link' || t.type === 'image') out.push({ href: t.href, kind: 'link' });
    if (t.type === 'codespan' && /^\/docs\/[a-z0-9-]+(#\S*)?$/.test(t.text)) out.push({ href: t.text, kind: 'code' });
  });
  return out;
}

const anchorCache = new Map<string, Set<string>>();
const anchors = (file: string) => {
  if (!anchorCache.has(file)) anchorCache.set(file, anchorsOf(readFileSync(file, 'utf8')));
  return anchorCache.get(file)!;
};

/** What is wrong with one reference of `file`, or null when it leads somewhere. */
function problem(file: string, { href, kind }: Reference, pkg?: { dir: string; files: string[] }): string | null {
  if (/^(https?:|mailto:)/.test(href)) return pkg && href.startsWith('http:') ? 'use https' : null;
  const [path, anchor] = href.split('#') as [string, string | undefined];
  let target: string;
  if (path === '') target = file;
  else if (path === '/docs') return anchor ? 'the API reference at /docs has no headings of ours' : null;
  else if (path.startsWith('/docs/')) {
    target = join(ROOT, 'docs', `${path.slice('/docs/'.length)}.md`);
    if (!existsSync(target)) return `no page ${path}: docs/ has no ${relative(ROOT, target)}`;
  } else if (path.startsWith('/') || /^[a-z][a-z0-9+.-]*:/i.test(path)) {
    return 'neither a file, a page of the manual nor a web address';
  } else {
    if (kind === 'code') return null;
    target = resolve(dirname(file), decodeURIComponent(path));
    if (pkg) {
      const inside = relative(pkg.dir, target);
      if (inside.startsWith('..')) return `outside the package: npm shows the README without the repository`;
      const top = inside.split(/[\\/]/)[0]!;
      if (!pkg.files.includes(top) && inside !== 'package.json') return `${inside} does not ship in the package (files: ${pkg.files.join(', ')})`;
    }
    if (!existsSync(target)) return `${relative(ROOT, target)} does not exist`;
  }
  if (anchor === undefined) return null;
  if (!target.endsWith('.md') || statSync(target).isDirectory()) return `an anchor in ${relative(ROOT, target)}, which is no markdown`;
  return anchors(target).has(anchor) ? null : `${relative(ROOT, target)} has no heading #${anchor}`;
}

function problems(file: string, pkg?: { dir: string; files: string[] }): string[] {
  return references(readFileSync(file, 'utf8'))
    .map((ref) => [ref, problem(file, ref, pkg)] as const)
    .filter(([, why]) => why !== null)
    .map(([ref, why]) => `${relative(ROOT, file)}: ${ref.href}: ${why}`);
}

describe('links in the documentation', () => {
  it('the README and every page of the manual link only to what exists', () => {
    const files = [join(ROOT, 'README.md'), ...MANUAL.map((f) => join(ROOT, f))];
    expect(files.flatMap((f) => problems(f))).toEqual([]);
    // Something was checked: the README links to every page, and every page back to the index.
    const readme = references(readFileSync(join(ROOT, 'README.md'), 'utf8')).map((r) => r.href);
    for (const page of MANUAL) expect(readme, page).toContain(page);
    for (const page of MANUAL.filter((p) => p !== 'docs/index.md'))
      expect(
        references(readFileSync(join(ROOT, page), 'utf8')).map((r) => r.href),
        page,
      ).toContain('index.md');
  });

  it.each(PACKAGES)('the README of %s links only to the web, to what the package ships, and to pages of the manual', (dir) => {
    const pkgDir = join(ROOT, dir);
    const files = (JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')) as { files: string[] }).files;
    expect(files).toContain('README.md');
    expect(problems(join(pkgDir, 'README.md'), { dir: pkgDir, files })).toEqual([]);
  });
});
