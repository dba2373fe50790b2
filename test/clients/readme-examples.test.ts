// Every TypeScript and JavaScript example of the packages' READMEs (each
// package's manual on npm) compiles as a consumer's module would: each fenced
// ```ts / ```typescript / ```js block is written out as a module of its own in
// a scratch folder, importing the packages by their published names, and the
// TypeScript compiler checks them all (strict; JavaScript with checkJs) with
// Node's module resolution against the built packages: node_modules/@deviceid/*
// are the workspace's links to them, their `exports` and declarations as npm
// would install them. A block that is deliberately a fragment is preceded by
// `<!-- not-compiled: why -->`; few are.
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const READMES = ['contract/README.md', 'clients/node/README.md', 'clients/cli/README.md', 'clients/agent/README.md', 'clients/proxy/README.md'];
const LANGS: Record<string, 'ts' | 'js'> = { ts: 'ts', typescript: 'ts', js: 'js', javascript: 'js' };

interface Block {
  readme: string;
  /** Line of the block's first line of code in the README (1-based). */
  line: number;
  lang: 'ts' | 'js';
  code: string;
  /** Why the block is not compiled, when it is marked so. */
  skip?: string;
}

/** The fenced blocks of a README in a language we compile. */
function blocks(readme: string): Block[] {
  const lines = readFileSync(join(ROOT, readme), 'utf8').split('\n');
  const out: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w+)\s*$/.exec(lines[i]!);
    if (!open && !/^```/.test(lines[i]!)) continue;
    const end = lines.findIndex((l, j) => j > i && /^```\s*$/.test(l));
    if (end < 0) throw new Error(`${readme}:${i + 1}: unclosed code block`);
    const lang = open && LANGS[open[1]!];
    if (lang) {
      const before = lines.slice(0, i).findLast((l) => l.trim() !== '');
      const skip = before && /^<!-- not-compiled: (.+) -->$/.exec(before.trim())?.[1];
      out.push({ readme, line: i + 2, lang, code: lines.slice(i + 1, end).join('\n'), ...(skip && { skip }) });
    }
    i = end;
  }
  return out;
}

const ALL = READMES.flatMap(blocks);
let scratch: string | undefined;

afterAll(() => {
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

describe('the packages’ README examples', () => {
  it('every package but the contract shows code, and few blocks are left uncompiled, each saying why', () => {
    for (const readme of READMES.filter((r) => r !== 'contract/README.md')) {
      expect(ALL.filter((b) => b.readme === readme && !b.skip).length, readme).toBeGreaterThanOrEqual(3);
    }
    const skipped = ALL.filter((b) => b.skip);
    expect(skipped.length, skipped.map((b) => `${b.readme}:${b.line}: ${b.skip}`).join('\n')).toBeLessThanOrEqual(3);
  });

  it('compile against the built packages, imported by their published names', () => {
    for (const name of ['contract', 'client', 'cli', 'agent', 'proxy']) {
      const pkg = join(ROOT, 'node_modules/@deviceid', name);
      const types = (JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8')) as { types: string }).types;
      if (!existsSync(join(pkg, types))) throw new Error(`@deviceid/${name} is not built (${types} is missing): npm run build`);
    }
    scratch = mkdtempSync(join(tmpdir(), 'deviceid-readme-'));
    // The scratch project resolves packages as one inside the repository would: through its node_modules.
    symlinkSync(join(ROOT, 'node_modules'), join(scratch, 'node_modules'), 'dir');
    const files = new Map<string, Block>();
    ALL.filter((b) => !b.skip).forEach((b, n) => {
      const file = join(scratch!, `${b.readme.replace(/\W+/g, '-')}-${n}.${b.lang === 'ts' ? 'mts' : 'mjs'}`);
      // `export {}`: a block that imports nothing is still a module of its own.
      writeFileSync(file, `${b.code}\nexport {};\n`);
      files.set(file, b);
    });
    const program = ts.createProgram([...files.keys()], {
      strict: true,
      noEmit: true,
      allowJs: true,
      checkJs: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      lib: ['lib.es2023.d.ts', 'lib.dom.d.ts', 'lib.dom.iterable.d.ts'],
      types: ['node'],
      esModuleInterop: true,
      skipLibCheck: true,
    });
    const errors = ts.getPreEmitDiagnostics(program).map((d) => {
      const text = ts.flattenDiagnosticMessageText(d.messageText, '\n');
      const block = d.file && files.get(d.file.fileName);
      if (!block || d.start === undefined) return text;
      const { line } = d.file!.getLineAndCharacterOfPosition(d.start);
      return `${block.readme}:${block.line + line}: ${text}`;
    });
    expect(errors).toEqual([]);
  }, 120_000);
});
