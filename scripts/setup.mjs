#!/usr/bin/env node
// The set-up step of `npm start` and `npm test`, using only Node built-ins:
// 1. installs npm packages (`npm ci`) when node_modules does not match the lock file;
// 2. compiles the workspace packages and the server (scripts/build.mjs --if-changed);
// 3. builds the FerretDB launcher (devdb/) into .devdb/bin when it is missing
//    or its source changed, against FerretDB v1.24.2 with our patches
//    (devdb/ferretdb-*.patch, in name order) applied. A cold Go build takes 2–5
//    minutes on 2 cores.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const say = (msg) => process.stderr.write(`setup: ${msg}\n`);

function sha256(files) {
  const h = createHash('sha256');
  for (const f of files)
    h.update(f)
      .update('\0')
      .update(readFileSync(join(root, f)))
      .update('\0');
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
// Every file of devdb/ (Go sources, go.mod/go.sum, the patches) and this script,
// which decides how the launcher is built.
const devdbFiles = readdirSync(join(root, 'devdb'))
  .filter((f) => /\.(go|mod|sum|patch)$/.test(f))
  .sort()
  .map((f) => `devdb/${f}`);
const srcHash = sha256([...devdbFiles, 'scripts/setup.mjs']);
if (!existsSync(bin) || !existsSync(binStamp) || readFileSync(binStamp, 'utf8') !== srcHash) {
  const go = ['go', '/usr/local/go/bin/go'].find((g) => spawnSync(g, ['version'], { stdio: 'ignore' }).status === 0);
  if (!go) {
    const hint = process.env.MONGODB_URI ? 'continuing with MONGODB_URI' : 'install Go (https://go.dev/dl) or set MONGODB_URI to a MongoDB server';
    say(`Go is not installed, so the FerretDB launcher cannot be built; ${hint}.`);
    if (!process.env.MONGODB_URI) process.exit(1);
  } else {
    say('building the FerretDB launcher (devdb/, FerretDB v1.24.2 patched); the first build takes a few minutes…');
    mkdirSync(join(root, '.devdb', 'bin'), { recursive: true });
    const t0 = Date.now();
    const goEnv = { ...process.env, GOTOOLCHAIN: 'local', CGO_ENABLED: '0', GOFLAGS: '-buildvcs=false' };
    const devdb = join(root, 'devdb');

    // FerretDB v1 is frozen upstream, so we carry a patch (see its header):
    // copy the module out of the read-only module cache, patch the copy and
    // build with a modfile that replaces the module by it. devdb/go.mod stays
    // the plain upstream requirement.
    const dl = spawnSync(go, ['mod', 'download', '-json', 'github.com/FerretDB/FerretDB@v1.24.2'], { cwd: devdb, env: goEnv, encoding: 'utf8' });
    const modDir = dl.status === 0 ? JSON.parse(dl.stdout).Dir : undefined;
    if (!modDir) {
      say(`cannot download FerretDB v1.24.2: ${dl.stderr || dl.stdout}`);
      process.exit(1);
    }
    const src = join(root, '.devdb', 'ferretdb-src');
    rmSync(src, { recursive: true, force: true });
    cpSync(modDir, src, { recursive: true });
    const writable = (dir) => {
      chmodSync(dir, 0o755);
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        if (e.isDirectory()) writable(join(dir, e.name));
        else chmodSync(join(dir, e.name), 0o644);
      }
    };
    writable(src);
    // GIT_CEILING_DIRECTORIES: without it git would find this repository above
    // .devdb/ and silently skip the patch's paths as outside it.
    for (const patch of readdirSync(devdb)
      .filter((f) => /^ferretdb-.*\.patch$/.test(f))
      .sort()) {
      run('git', ['apply', '--whitespace=nowarn', join(devdb, patch)], {
        cwd: src,
        env: { ...process.env, GIT_CEILING_DIRECTORIES: join(root, '.devdb') },
      });
    }

    const buildMod = join(root, '.devdb', 'build.mod');
    writeFileSync(buildMod, `${readFileSync(join(devdb, 'go.mod'), 'utf8')}\nreplace github.com/FerretDB/FerretDB => ${src}\n`);
    cpSync(join(devdb, 'go.sum'), join(root, '.devdb', 'build.sum')); // -modfile=X.mod reads X.sum
    run(go, ['build', '-trimpath', `-modfile=${buildMod}`, '-o', bin, '.'], { cwd: devdb, env: goEnv });
    writeFileSync(binStamp, srcHash);
    say(`launcher built in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  }
}
