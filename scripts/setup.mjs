#!/usr/bin/env node
// The set-up step of `npm start` and `npm test`, using only Node built-ins:
// 1. installs npm packages (`npm ci`) when node_modules does not match the lock file;
// 2. compiles the workspace packages and the server (scripts/build.mjs --if-changed);
// 3. builds the FerretDB launcher (devdb/) into .devdb/bin when it is missing
//    or its source changed. A cold Go build takes 2–5 minutes on 2 cores.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const say = (msg) => process.stderr.write(`setup: ${msg}\n`);

function sha256(files) {
  const h = createHash('sha256');
  for (const f of files) h.update(f).update('\0').update(readFileSync(join(root, f))).update('\0');
  return h.digest('hex');
}

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', ...opts });
  if (r.error) throw r.error;
  if (r.status !== 0) {
    say(`\`${cmd} ${args.join(' ')}\` failed with exit code ${r.status}`);
    process.exit(r.status ?? 1);
  }
}

// 1. npm packages
const lockStamp = join(root, 'node_modules', '.deviceid-lock.sha256');
const lockHash = sha256(['package-lock.json']);
if (!existsSync(lockStamp) || readFileSync(lockStamp, 'utf8') !== lockHash) {
  say('installing npm packages (npm ci)…');
  run('npm', ['ci', '--no-audit', '--no-fund']);
  writeFileSync(lockStamp, lockHash);
}

// 2. the packages and the server, compiled (skipped when their sources did not change)
run(process.execPath, [join(root, 'scripts', 'build.mjs'), '--if-changed']);

// 3. the FerretDB launcher
const bin = join(root, '.devdb', 'bin', 'devdb');
const binStamp = bin + '.sha256';
const srcHash = sha256(['devdb/go.mod', 'devdb/go.sum', 'devdb/main.go']);
if (!existsSync(bin) || !existsSync(binStamp) || readFileSync(binStamp, 'utf8') !== srcHash) {
  const go = ['go', '/usr/local/go/bin/go'].find((g) => spawnSync(g, ['version'], { stdio: 'ignore' }).status === 0);
  if (!go) {
    const hint = process.env.MONGODB_URI
      ? 'continuing with MONGODB_URI'
      : 'install Go (https://go.dev/dl) or set MONGODB_URI to a MongoDB server';
    say(`Go is not installed, so the FerretDB launcher cannot be built; ${hint}.`);
    if (!process.env.MONGODB_URI) process.exit(1);
  } else {
    say('building the FerretDB launcher (devdb/, FerretDB v1.24.2); the first build takes a few minutes…');
    mkdirSync(join(root, '.devdb', 'bin'), { recursive: true });
    const t0 = Date.now();
    run(go, ['build', '-trimpath', '-o', bin, '.'], {
      cwd: join(root, 'devdb'),
      env: { ...process.env, GOTOOLCHAIN: 'local', CGO_ENABLED: '0', GOFLAGS: '-buildvcs=false' },
    });
    writeFileSync(binStamp, srcHash);
    say(`launcher built in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  }
}
