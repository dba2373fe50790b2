#!/usr/bin/env node
// Builds one publishable package (`node scripts/build-package.mjs <dir>`, or
// `npm run build -w <dir>`) into <dir>/dist:
// - contract, clients/node, clients/cli, clients/proxy: tsc → dist/esm (ES modules with
//   declarations); esbuild turns each module into CommonJS → dist/cjs (with the
//   same declarations and a package.json saying "commonjs").
// - clients/agent: esbuild bundles → dist/index.js (ES module for bundlers),
//   dist/cjs/index.js (CommonJS, for require) and dist/deviceid.global.js
//   (classic script defining `DeviceId`); tsc emits the declarations.
// A package imports its siblings by name (`@deviceid/contract`), so their
// declarations must be built first: scripts/build.mjs builds them in order.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const require = createRequire(import.meta.url);
const tsc = require.resolve('typescript/bin/tsc');
const esbuild = await import('esbuild');

const dir = resolve(process.argv[2] ?? '.');
const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
const dist = join(dir, 'dist');

/** The compiler options every package is built with (strict, declarations, no paths: siblings resolve to their builds). */
const compilerOptions = {
  target: 'ES2022',
  module: 'NodeNext',
  moduleResolution: 'NodeNext',
  lib: ['ES2023', 'DOM'],
  types: ['node'],
  strict: true,
  noUncheckedIndexedAccess: true,
  noImplicitOverride: true,
  esModuleInterop: true,
  skipLibCheck: true,
  isolatedModules: true,
  forceConsistentCasingInFileNames: true,
  declaration: true,
  sourceMap: false,
  rootDir: '.',
};

function runTsc(options, files) {
  const config = join(dir, 'tsconfig.build.tmp.json');
  writeFileSync(config, JSON.stringify({ compilerOptions: { ...compilerOptions, ...options }, files }, null, 2));
  try {
    const r = spawnSync(process.execPath, [tsc, '-p', config], { cwd: dir, stdio: 'inherit' });
    if (r.status !== 0) throw new Error(`tsc failed for ${pkg.name}`);
  } finally {
    rmSync(config, { force: true });
  }
}

function walk(d) {
  return readdirSync(d).flatMap((f) => (statSync(join(d, f)).isDirectory() ? walk(join(d, f)) : [join(d, f)]));
}

/** The package's entry points: what its `exports` name, as source files. */
function entries() {
  const out = new Set();
  for (const target of Object.values(pkg.exports ?? {})) {
    const js = typeof target === 'string' ? target : target.import?.default;
    if (!js || !js.startsWith('./dist/esm/')) continue;
    out.add(js.replace('./dist/esm/', './').replace(/\.js$/, '.ts'));
  }
  if (pkg.bin) out.add('./bin.ts');
  return [...out];
}

rmSync(dist, { recursive: true, force: true });

if (pkg.name === '@deviceid/agent') {
  const common = { entryPoints: [join(dir, 'index.ts')], bundle: true, platform: 'browser', legalComments: 'none', logLevel: 'warning' };
  const target = ['es2019', 'chrome80', 'edge80', 'firefox78', 'safari15'];
  await esbuild.build({ ...common, format: 'esm', target, outfile: join(dist, 'index.js') });
  await esbuild.build({ ...common, format: 'iife', globalName: 'DeviceId', target, minify: true, outfile: join(dist, 'deviceid.global.js') });
  // require(): the same bundle as CommonJS, beside copies of the declarations (dist/cjs says "commonjs").
  await esbuild.build({ ...common, format: 'cjs', target, outfile: join(dist, 'cjs', 'index.js') });
  runTsc({ emitDeclarationOnly: true, outDir: 'dist', lib: ['ES2023', 'DOM'], types: [] }, ['./index.ts']);
  for (const file of walk(dist).filter((f) => f.endsWith('.d.ts') && !f.startsWith(join(dist, 'cjs')))) {
    mkdirSync(dirname(join(dist, 'cjs', relative(dist, file))), { recursive: true });
    cpSync(file, join(dist, 'cjs', relative(dist, file)));
  }
  writeFileSync(join(dist, 'cjs', 'package.json'), JSON.stringify({ type: 'commonjs' }) + '\n');
} else {
  runTsc({ outDir: 'dist/esm' }, entries());
  // CommonJS: each ES module converted on its own (imports stay imports of the
  // sibling files); the bin (top-level await) stays ESM only.
  const cjs = join(dist, 'cjs');
  for (const file of walk(join(dist, 'esm'))) {
    const rel = relative(join(dist, 'esm'), file);
    const out = join(cjs, rel);
    mkdirSync(dirname(out), { recursive: true });
    if (file.endsWith('.d.ts')) cpSync(file, out);
    else if (file.endsWith('.js') && basename(file) !== 'bin.js') {
      const { code } = await esbuild.transform(readFileSync(file, 'utf8'), { format: 'cjs', platform: 'node', target: 'node20', loader: 'js' });
      writeFileSync(out, code);
    }
  }
  writeFileSync(join(cjs, 'package.json'), JSON.stringify({ type: 'commonjs' }) + '\n');
}

// The licence and attribution go into every package.
for (const f of ['LICENSE', 'NOTICE']) if (existsSync(join(root, f))) cpSync(join(root, f), join(dir, f));
process.stderr.write(`built ${pkg.name} → ${relative(root, dist)}\n`);
