#!/usr/bin/env node
// `npm run build`: the publishable packages (contract → client → cli → agent → proxy,
// each into its own dist/) and the server (compiled JavaScript in dist/, what
// `npm start` runs). With --if-changed, a part whose sources did not change
// since its last build is skipped (scripts/setup.mjs uses that).
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const ifChanged = process.argv.includes('--if-changed');
const say = (msg) => process.stderr.write(`build: ${msg}\n`);

function files(dir) {
  if (!existsSync(dir)) return [];
  if (statSync(dir).isFile()) return [dir];
  return readdirSync(dir)
    .filter((f) => f !== 'dist' && f !== 'node_modules')
    .flatMap((f) => files(join(dir, f)))
    .sort();
}

function hash(paths) {
  const h = createHash('sha256');
  for (const f of paths.flatMap((p) => files(join(root, p)))) h.update(relative(root, f)).update('\0').update(readFileSync(f)).update('\0');
  return h.digest('hex');
}

function node(args) {
  const r = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) {
    say(`\`node ${args.join(' ')}\` failed`);
    process.exit(r.status ?? 1);
  }
}

// Stamps live outside the packages so that they are never packed.
const stamps = join(root, 'node_modules', '.cache', 'deviceid-build');
mkdirSync(stamps, { recursive: true });

const shared = ['scripts/build-package.mjs', 'LICENSE', 'NOTICE', 'package-lock.json'];
const parts = [
  { name: '@deviceid/contract', dir: 'contract', inputs: ['contract', ...shared] },
  { name: '@deviceid/client', dir: 'clients/node', inputs: ['contract', 'clients/node', ...shared] },
  { name: '@deviceid/cli', dir: 'clients/cli', inputs: ['contract', 'clients/node', 'clients/cli', ...shared] },
  { name: '@deviceid/agent', dir: 'clients/agent', inputs: ['contract', 'clients/agent', ...shared] },
  { name: '@deviceid/proxy', dir: 'clients/proxy', inputs: ['clients/proxy', ...shared] },
  {
    name: 'server',
    dir: '.',
    inputs: ['server', 'contract', 'openapi/generate.ts', 'tsconfig.json', 'tsconfig.server.json', 'package-lock.json'],
    build: () => node([createRequire(import.meta.url).resolve('typescript/bin/tsc'), '-p', 'tsconfig.server.json']),
  },
];

for (const part of parts) {
  const stamp = join(stamps, `${part.name.replace('/', '__')}.sha256`);
  const digest = hash(part.inputs);
  if (ifChanged && existsSync(stamp) && existsSync(join(root, part.dir, 'dist')) && readFileSync(stamp, 'utf8') === digest) continue;
  const t0 = Date.now();
  if (part.build) part.build();
  else node([join(root, 'scripts/build-package.mjs'), join(root, part.dir)]);
  writeFileSync(stamp, digest);
  say(`${part.name} built in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}
