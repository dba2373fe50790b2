// A third party's Go client: oapi-codegen (the version test/go/go.mod pins)
// generates a client from the live server's /openapi.json without a warning,
// `go vet` passes on it, and test/go/main.go calls every public operation
// through it against the live server: identify (plain and sealed), the full
// event, a 401 and a 404, an update, search paged to the end, visits, a 429,
// visitor deletion and the device code flow, decoding every body strictly.
// The generated types are checked too: one error type, no float32, no
// interface{}, no anonymous struct.
//
// The generator is built once into node_modules/.cache/deviceid-go (rebuilt
// when test/go/go.mod or go.sum change; the first build takes about a
// minute); the client is generated and built there on every run.
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signUp, type Customer } from '../support/dashboard.js';
import { authorizeGrant } from '../support/deviceflow.js';
import { createHarness, type Harness } from '../support/harness.js';
import { listenApp, type Listening } from '../support/httpServer.js';
import { deviceValues, identifyBody } from '../support/signals.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const MODULE = join(ROOT, 'test', 'go');
const CACHE = join(ROOT, 'node_modules', '.cache', 'deviceid-go');
const WORK = join(CACHE, 'work');
const GENERATOR = join(CACHE, 'oapi-codegen');

const GO = ['go', '/usr/local/go/bin/go'].find((g) => spawnSync(g, ['version'], { stdio: 'ignore' }).status === 0);
if (!GO) console.warn('go-client.test.ts: skipped, Go is not installed (https://go.dev/dl; CI puts /usr/local/go/bin on PATH)');

const goEnv = { ...process.env, GOTOOLCHAIN: 'local', GOFLAGS: '-buildvcs=false', CGO_ENABLED: '0' };

function run(cmd: string, args: string[], cwd: string, timeout = 300_000) {
  const r = spawnSync(cmd, args, { cwd, env: goEnv, encoding: 'utf8', timeout });
  return { status: r.status, out: `${r.stdout ?? ''}${r.stderr ?? ''}`, stderr: r.stderr ?? '', error: r.error };
}

/** The generator, built from the module test/go/go.mod pins; rebuilt when it changes. */
function buildGenerator(go: string): void {
  const stamp = GENERATOR + '.sha256';
  const hash = createHash('sha256')
    .update(readFileSync(join(MODULE, 'go.mod')))
    .update(readFileSync(join(MODULE, 'go.sum')))
    .digest('hex');
  if (existsSync(GENERATOR) && existsSync(stamp) && readFileSync(stamp, 'utf8') === hash) return;
  mkdirSync(CACHE, { recursive: true });
  const r = run(go, ['build', '-trimpath', '-o', GENERATOR, 'github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen'], MODULE, 900_000);
  if (r.status !== 0) throw new Error(`building oapi-codegen failed: ${r.error ?? ''}\n${r.out}`);
  writeFileSync(stamp, hash);
}

/** Type declarations of the generated code: name → the declaration's text (struct bodies included). */
function typeDeclarations(code: string): Map<string, string> {
  const out = new Map<string, string>();
  const lines = code.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const m = /^type (\w+) (.*)$/.exec(lines[i]!);
    if (!m) continue;
    let text = m[2]!;
    if (text.endsWith('{')) {
      // The body without its comments.
      for (i++; i < lines.length && lines[i] !== '}'; i++) if (!/^\s*\/\//.test(lines[i]!)) text += '\n' + lines[i];
    }
    out.set(m[1]!, text);
  }
  return out;
}

describe.skipIf(!GO)('a Go client generated with oapi-codegen', () => {
  const go = GO!;
  let h: Harness;
  let srv: Listening;
  let c: Customer;
  let generated = '';

  beforeAll(async () => {
    buildGenerator(go);
    h = await createHarness(import.meta.filename);
    srv = await listenApp(h.app);
    c = await signUp(h);

    rmSync(WORK, { recursive: true, force: true });
    mkdirSync(join(WORK, 'api'), { recursive: true });
    for (const f of ['go.mod', 'go.sum', 'main.go']) copyFileSync(join(MODULE, f), join(WORK, f));
    // The document as the server serves it.
    const doc = await (await fetch(`${srv.url}/openapi.json`)).text();
    writeFileSync(join(WORK, 'openapi.json'), doc);
    const gen = run(GENERATOR, ['-generate', 'types,client', '-package', 'api', '-o', join(WORK, 'api', 'api.gen.go'), join(WORK, 'openapi.json')], WORK);
    expect(gen.out, 'oapi-codegen prints nothing: no warning').toBe('');
    expect(gen.status).toBe(0);
    generated = readFileSync(join(WORK, 'api', 'api.gen.go'), 'utf8');
  }, 900_000);

  afterAll(async () => {
    await srv?.close();
    await h?.close();
  });

  it('generates types without float32, interface{}, anonymous structs, or more than one error type', () => {
    const types = typeDeclarations(generated);
    expect(types.size).toBeGreaterThan(100);
    const bad = [...types].filter(([, text]) => /\bfloat32\b|interface\{\}|\bany\b|\bstruct \{[^\n]*$/m.test(text.split('\n').slice(1).join('\n')));
    expect(bad.map(([name]) => name)).toEqual([]);
    for (const [name, text] of types) expect(text, name).not.toMatch(/^(=\s*)?(map\[string\])?interface\{\}|float32/);
    // What every error status of every operation decodes into.
    const errorTypes = new Set<string>();
    for (const [name, text] of types) {
      if (!name.endsWith('Response')) continue;
      for (const m of text.matchAll(/\tJSON([45]\d\d) \*(\w+)/g)) errorTypes.add(`${m[2]}${m[2] === 'Error' ? '' : ` (${name} ${m[1]})`}`);
    }
    // Besides Error: the probe's not-ready answer and the token poll's end of a grant (spec 4.2: a status, not an error).
    expect([...errorTypes].sort()).toEqual(['Error', 'NotReady (ReadyzResponse 503)', 'TokenEnded (PollTokenResponse 410)']);
    expect(types.get('Error')).toMatch(/Code ErrorCode/);
    // Numbers: int64 times, double coordinates.
    expect(types.get('IpLocation')).toMatch(/Latitude +\*float64/);
    expect(types.get('IdentifyResult')).toMatch(/Timestamp +int64/);
  });

  it('vets, builds, and calls every public operation on the live server', async () => {
    // Fetch the runtime modules first: on a new machine `go vet` would otherwise print its downloads.
    expect(run(go, ['mod', 'download'], WORK).status, 'go mod download').toBe(0);
    const vet = run(go, ['vet', './...'], WORK);
    expect(vet.out, 'go vet').toBe('');
    const build = run(go, ['build', '-o', 'consumer', '.'], WORK);
    expect(build.out, 'go build').toBe('');

    const live = await c.key('live');
    const secret = await c.key('secret');
    // A second project with sealed results.
    const origin = new URL(h.config.baseUrl).origin;
    const project = await c.agent.post('/api/projects').set('origin', origin).send({ name: 'Sealed' }).expect(201);
    const sealedProject: string = project.body.id;
    const sealedKey = await c.key('live', sealedProject);
    await c.agent.post(`/api/projects/${sealedProject}/sealing/key`).set('origin', origin).send({}).expect(201);
    const otherTestKey = await (await signUp(h)).key('test');

    const child = spawn(join(WORK, 'consumer'), [], {
      cwd: WORK,
      env: {
        ...process.env,
        BASE_URL: srv.url,
        LIVE_KEY: live,
        SEALED_KEY: sealedKey,
        SECRET_KEY: secret,
        OTHER_TEST_KEY: otherTestKey,
        BODY: JSON.stringify(identifyBody(deviceValues(9090))),
      },
      stdio: 'pipe',
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => {
      stderr += d;
      const m = /USER_CODE=(\S+)/.exec(stderr);
      if (m && !child.stdin.writableEnded) {
        void authorizeGrant(c, m[1]!).then((r) => {
          expect(r.status).toBe(200);
          child.stdin.end('approved\n');
        });
      }
    });
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(stderr.replace(/USER_CODE=\S+\n/, ''), 'the Go program').toBe('');
    expect(code).toBe(0);
    const summary = JSON.parse(stdout);
    expect(summary).toMatchObject({ visitorId: expect.stringMatching(/^iq_/), searchEvents: 6, limit: 10 });
    expect(summary.searchPages).toBeGreaterThanOrEqual(3);
  }, 300_000);
});
