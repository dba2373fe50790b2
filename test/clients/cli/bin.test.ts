// The `deviceid login` command as a child process against the real service;
// the test plays the user in the browser through the consent API.
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { signUp, type Customer } from '../../support/dashboard.js';
import { authorizeGrant, cliKeys, denyGrant } from '../../support/deviceflow.js';
import { createHarness, type Harness } from '../../support/harness.js';
import { listen, listenApp, type Listening } from '../../support/httpServer.js';
import { deviceValues, identifyBody } from '../../support/signals.js';

const BIN = fileURLToPath(new URL('../../../bin/deviceid.mjs', import.meta.url));
const LIVE_KEY_RE = /svc_live_[0-9A-Za-z]{38}/;
const CODE_RE = /one-time code: ([BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4})/;

let h: Harness;
let srv: Listening;
let c: Customer;
let dir: string;
beforeAll(async () => {
  h = await createHarness(import.meta.filename);
  srv = await listenApp(h.app);
  c = await signUp(h);
  dir = mkdtempSync(join(tmpdir(), 'deviceid-cli-'));
});
afterAll(async () => {
  await srv.close();
  await h.close();
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(() => {
  h.clock.advance(61_000);
});

let n = 0;
const freshFile = () => join(dir, `case-${++n}`, 'deviceid', 'credentials.json');

interface Run {
  child: ReturnType<typeof spawn>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
  stdout: () => string;
  stderr: () => string;
  /** Resolves with the first match of `re` in stderr. */
  waitFor: (re: RegExp, timeoutMs?: number) => Promise<RegExpMatchArray>;
}

function deviceid(args: string[], env: Record<string, string> = {}): Run {
  const base: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v === undefined || /^(DEVICEID_|SSH_)/.test(k) || k === 'DISPLAY' || k === 'WAYLAND_DISPLAY' || k === 'BROWSER') continue;
    base[k] = v;
  }
  const child = spawn(process.execPath, [BIN, ...args], { env: { ...base, HOME: dir, XDG_CONFIG_HOME: join(dir, 'xdg'), ...env }, stdio: 'pipe' });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal, at: Date.now() })),
  );
  const waitFor = async (re: RegExp, timeoutMs = 15_000) => {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const m = re.exec(err);
      if (m) return m;
      if (child.exitCode !== null || Date.now() > until) throw new Error(`no ${re} in stderr (exit ${child.exitCode}):\n${err}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  };
  return { child, exited, stdout: () => out, stderr: () => err, waitFor };
}

const login = (file: string, ...extra: string[]) => deviceid(['login', '--base-url', srv.url, '--no-browser', ...extra], { DEVICEID_CREDENTIALS_FILE: file });

describe('deviceid login', () => {
  it('prints the URL and code, waits for approval, stores the key in a 0600 file and never prints it', async () => {
    const file = freshFile();
    const run = login(file, '--name', 'ci runner 7');
    const [, userCode] = await run.waitFor(CODE_RE);
    expect(run.stderr()).toContain(`${h.config.baseUrl}/cli/auth?code=${userCode}`);
    await run.waitFor(/Waiting for approval/);
    await authorizeGrant(c, userCode!).expect(200);
    const { code } = await run.exited;

    expect(code, run.stderr()).toBe(0);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(file, '..')).mode & 0o777).toBe(0o700);
    const stored = JSON.parse(readFileSync(file, 'utf8'));
    const apiKey: string = stored.servers[srv.url].apiKey;
    expect(apiKey).toMatch(LIVE_KEY_RE);
    expect(stored.servers[srv.url]).toMatchObject({ clientName: 'ci runner 7', createdAt: expect.any(String) });
    expect(run.stderr()).toContain(`Key saved to ${file}`);
    expect(run.stderr()).not.toContain(apiKey);
    expect(run.stderr()).not.toMatch(LIVE_KEY_RE);
    expect(run.stdout()).toBe('');
    // Not a TTY: one plain waiting line, no spinner escape codes.
    expect(run.stderr()).not.toContain('\x1b[');
    expect((await cliKeys(c)).map((k) => k.name)).toContain('ci runner 7 (CLI)');
    h.clock.advance(1000);
    expect(
      (
        await h
          .http()
          .post('/v1/identify')
          .set('x-api-key', apiKey)
          .send(identifyBody(deviceValues(77)))
      ).status,
    ).toBe(200);
  }, 40_000);

  it('keeps other services’ entries and tightens an existing file to 0600', async () => {
    const file = freshFile();
    const other = { apiKey: 'svc_live_other', clientName: 'other', createdAt: '2026-01-01T00:00:00.000Z' };
    mkdirSync(join(file, '..'), { recursive: true });
    writeFileSync(file, JSON.stringify({ version: 1, servers: { 'https://other.example': other } }));
    chmodSync(file, 0o644);

    const run = login(file);
    const [, userCode] = await run.waitFor(CODE_RE);
    await authorizeGrant(c, userCode!).expect(200);
    expect((await run.exited).code, run.stderr()).toBe(0);
    const stored = JSON.parse(readFileSync(file, 'utf8'));
    expect(stored.servers['https://other.example']).toEqual(other);
    expect(stored.servers[srv.url].apiKey).toMatch(LIVE_KEY_RE);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  }, 40_000);

  it('--print writes only the export line to stdout and stores nothing', async () => {
    const file = freshFile();
    const run = login(file, '--print');
    const [, userCode] = await run.waitFor(CODE_RE);
    await authorizeGrant(c, userCode!).expect(200);
    expect((await run.exited).code, run.stderr()).toBe(0);
    expect(run.stdout()).toMatch(/^export DEVICEID_API_KEY='svc_live_[0-9A-Za-z]{38}'\n$/);
    expect(run.stderr()).not.toMatch(LIVE_KEY_RE);
    expect(existsSync(file)).toBe(false);
  }, 40_000);

  it('exits 3 when the user denies, storing nothing', async () => {
    const file = freshFile();
    const run = login(file);
    const [, userCode] = await run.waitFor(CODE_RE);
    await denyGrant(c, userCode!).expect(200);
    expect((await run.exited).code, run.stderr()).toBe(3);
    expect(run.stderr()).toContain('denied');
    expect(existsSync(file)).toBe(false);
  }, 40_000);

  it('exits 4 when the code expires before approval', async () => {
    const file = freshFile();
    const run = login(file);
    await run.waitFor(CODE_RE);
    h.clock.advance(601_000);
    expect((await run.exited).code, run.stderr()).toBe(4);
    expect(run.stderr()).toContain('expired');
    expect(existsSync(file)).toBe(false);
  }, 40_000);

  it('exits 130 promptly on Ctrl-C (SIGINT) and 5 on SIGTERM while waiting', async () => {
    for (const [signal, expected, word] of [
      ['SIGINT', 130, 'Interrupted'],
      ['SIGTERM', 5, 'Aborted'],
    ] as const) {
      const file = freshFile();
      const run = login(file);
      await run.waitFor(/Waiting for approval/);
      const sentAt = Date.now();
      run.child.kill(signal);
      const { code, at } = await run.exited;
      expect(code, run.stderr()).toBe(expected);
      expect(at - sentAt).toBeLessThan(2000);
      expect(run.stderr()).toContain(word);
      expect(existsSync(file)).toBe(false);
    }
  }, 40_000);

  it('exits 2 on usage errors and 0 for --help', async () => {
    const cases = [
      [],
      ['frobnicate'],
      ['logout', 'extra'],
      ['login', '--bogus'],
      ['login', 'extra'],
      ['login', '--base-url', 'ftp://x'],
      ['login', '--name', ''],
    ];
    const runs = cases.map((args) => deviceid(args));
    for (const [i, run] of runs.entries()) {
      expect((await run.exited).code, `${cases[i]!.join(' ')}: ${run.stderr()}`).toBe(2);
      expect(run.stderr()).toMatch(/^deviceid: /);
    }
    const help = deviceid(['--help']);
    expect((await help.exited).code).toBe(0);
    expect(help.stdout()).toContain('Exit codes:');
  }, 40_000);

  it('exits 7 when the service cannot be reached', async () => {
    const gone = await listen(() => {});
    const url = gone.url;
    await gone.close();
    const run = deviceid(['login', '--base-url', url, '--no-browser'], { DEVICEID_CREDENTIALS_FILE: freshFile() });
    expect((await run.exited).code, run.stderr()).toBe(7);
    expect(run.stderr()).toContain('Cannot reach the service');
  }, 40_000);

  it('exits 8 before starting a grant when the credentials file cannot be written', async () => {
    const blocker = join(dir, 'not-a-dir');
    writeFileSync(blocker, 'x');
    const before = await h.store.db.collection('deviceGrants').countDocuments();
    const run = login(join(blocker, 'credentials.json'));
    expect((await run.exited).code, run.stderr()).toBe(8);
    expect(run.stderr()).toContain('--print');
    expect(await h.store.db.collection('deviceGrants').countDocuments()).toBe(before);
  }, 40_000);
});

describe('deviceid login again, logout and status', () => {
  const approve = async (run: Run) => {
    const [, userCode] = await run.waitFor(CODE_RE);
    await authorizeGrant(c, userCode!).expect(200);
    const { code } = await run.exited;
    expect(code, run.stderr()).toBe(0);
  };
  const stored = (file: string): string => JSON.parse(readFileSync(file, 'utf8')).servers[srv.url].apiKey;
  const statusOf = async (key: string) => {
    const res = await h.http().get('/v1/keys/self').set('x-api-key', key);
    return res.status === 200 ? res.body.apiKey.status : res.status;
  };
  const cmd = async (file: string, ...args: string[]) => {
    const run = deviceid([...args, '--base-url', srv.url], { DEVICEID_CREDENTIALS_FILE: file });
    const { code } = await run.exited;
    return { code, stdout: run.stdout(), stderr: run.stderr() };
  };

  it('a second login replaces the stored key and revokes the old one; --keep-old keeps it active', async () => {
    const file = freshFile();
    await approve(login(file, '--name', 'laptop'));
    const first = stored(file);
    const again = login(file, '--name', 'laptop');
    await approve(again);
    const second = stored(file);
    expect(second).not.toBe(first);
    expect(again.stderr()).toContain(`The key stored before (svc_live_…${first.slice(-4)}) was revoked.`);
    expect(again.stderr()).not.toContain(first);
    expect(await statusOf(first)).toBe(401);
    expect(await statusOf(second)).toBe('active');

    const kept = login(file, '--name', 'laptop', '--keep-old');
    await approve(kept);
    expect(kept.stderr()).toContain('stays active (--keep-old)');
    expect(await statusOf(second)).toBe('active');
    expect(await statusOf(stored(file))).toBe('active');
  }, 60_000);

  it('status shows the service, the key hint and whether it works; logout revokes and forgets', async () => {
    const file = freshFile();
    const none = await cmd(file, 'status');
    expect(none.code).toBe(9);
    expect(none.stdout).toContain(`Service:     ${srv.url}`);
    expect(none.stdout).toContain('none stored');

    await approve(login(file, '--name', 'ci box'));
    const key = stored(file);
    const ok = await cmd(file, 'status');
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toContain(`svc_live_…${key.slice(-4)}`);
    expect(ok.stdout).toContain('"ci box (CLI)"');
    expect(ok.stdout).toMatch(/Works: +yes \(live key of project prj_/);
    expect(ok.stdout + ok.stderr).not.toContain(key);

    const out = await cmd(file, 'logout');
    expect(out.code, out.stderr).toBe(0);
    expect(out.stderr).toContain(`Revoked the key svc_live_…${key.slice(-4)}`);
    expect(await statusOf(key)).toBe(401);
    expect(JSON.parse(readFileSync(file, 'utf8')).servers[srv.url]).toBeUndefined();
    expect((await cmd(file, 'logout')).stderr).toContain('Not signed in');

    // A stored key revoked elsewhere: status says it no longer works.
    await approve(login(file));
    const revoked = stored(file);
    await h.http().delete('/v1/keys/self').set('x-api-key', revoked).expect(200);
    const dead = await cmd(file, 'status');
    expect(dead.code).toBe(9);
    expect(dead.stdout).toContain('Works:       no');
  }, 60_000);

  it('logout leaves a dashboard key active (it cannot revoke itself) but forgets it', async () => {
    const file = freshFile();
    const key = await c.key('live');
    mkdirSync(join(file, '..'), { recursive: true });
    writeFileSync(file, JSON.stringify({ version: 1, servers: { [srv.url]: { apiKey: key, clientName: 'x', createdAt: '2026-01-01T00:00:00.000Z' } } }));
    const out = await cmd(file, 'logout');
    expect(out.code, out.stderr).toBe(0);
    expect(out.stderr).toContain('created in the dashboard');
    expect(await statusOf(key)).toBe('active');
    expect(JSON.parse(readFileSync(file, 'utf8')).servers[srv.url]).toBeUndefined();
  }, 30_000);
});
