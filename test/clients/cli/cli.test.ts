// deviceid/cli authorizeDevice against the real device code flow on a real
// port; the test plays the user, approving or denying through the consent API.
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  AbortedError,
  authorizeDevice,
  credentialsPath,
  CredentialsFileError,
  loadApiKey,
  loadCredential,
  saveCredential,
  GrantConsumedError,
  GrantDeniedError,
  GrantExpiredError,
  UnexpectedResponseError,
  ValidationError,
  type PollState,
  type Verification,
} from '../../../clients/cli/index.js';
import { signUp, type Customer } from '../../support/dashboard.js';
import { authorizeGrant, cliKeys, denyGrant } from '../../support/deviceflow.js';
import { createHarness, type Harness } from '../../support/harness.js';
import { json, listen, listenApp, scripted, type Listening } from '../../support/httpServer.js';
import { deviceValues, identifyBody } from '../../support/signals.js';

let h: Harness;
let srv: Listening;
let c: Customer;
beforeAll(async () => {
  h = await createHarness(import.meta.filename);
  srv = await listenApp(h.app);
  c = await signUp(h);
});
afterAll(async () => {
  await srv.close();
  await h.close();
});
// Fresh per-IP windows for starting grants (every request comes from 127.0.0.1).
beforeEach(() => {
  h.clock.advance(61_000);
});

const LIVE_KEY_RE = /^svc_live_[0-9A-Za-z]{38}$/;
const caught = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e,
  );
// Supertest sends a request only when it is awaited (then'd): Promise.resolve does that.
// A failed approval surfaces as an unhandled rejection, which fails the run.
const later = (ms: number, fn: () => unknown) => setTimeout(() => void Promise.resolve(fn()), ms);

describe('authorizeDevice', () => {
  it('hands over the URL and code, then resolves with a working live key once the user approves', async () => {
    const seen: Verification[] = [];
    const started = Date.now();
    const { apiKey } = await authorizeDevice({
      baseUrl: srv.url,
      clientName: 'Acme deploy',
      onVerification: (v) => {
        seen.push(v);
        // The user opens the page a moment later and approves.
        later(200, () => authorizeGrant(c, v.userCode).expect(200));
      },
    });
    expect(apiKey).toMatch(LIVE_KEY_RE);
    expect(seen).toHaveLength(1);
    const v = seen[0]!;
    expect(v.userCode).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
    expect(v.verificationUrl).toBe(`${h.config.baseUrl}/cli/auth?code=${v.userCode}`);
    expect(v.expiresAt.getTime() - started).toBeGreaterThan(599_000);
    expect(v.expiresAt.getTime() - started).toBeLessThanOrEqual(601_000);
    // It waited one interval (5 s) before polling, as RFC 8628 asks.
    expect(Date.now() - started).toBeGreaterThanOrEqual(5000);

    const keys = await cliKeys(c);
    expect(keys.map((k) => k.name)).toContain('Acme deploy (CLI)');
    h.clock.advance(1000);
    const res = await h
      .http()
      .post('/v1/identify')
      .set('x-api-key', apiKey)
      .send(identifyBody(deviceValues(4242)));
    expect(res.status).toBe(200);
  });

  it('rejects with GrantDeniedError when the user denies', async () => {
    const err = await caught(
      authorizeDevice({ baseUrl: srv.url, clientName: 'deny me', onVerification: (v) => void later(100, () => denyGrant(c, v.userCode).expect(200)) }),
    );
    expect(err).toBeInstanceOf(GrantDeniedError);
    expect(err).toMatchObject({ code: 'grant_denied', reason: 'denied', status: 410, body: { status: 'denied' } });
    expect((await cliKeys(c)).map((k) => k.name)).not.toContain('deny me (CLI)');
  });

  it('rejects with GrantExpiredError when the server says the grant expired', async () => {
    const err = await caught(
      authorizeDevice({
        baseUrl: srv.url,
        clientName: 'too late',
        onVerification: () => {
          h.clock.advance(601_000);
        },
      }),
    );
    expect(err).toBeInstanceOf(GrantExpiredError);
    expect(err).toMatchObject({ code: 'grant_expired', status: 410, body: { status: 'expired' } });
  });

  it('rejects with GrantConsumedError when the key was already collected', async () => {
    // A second tool polling the same grant is not something authorizeDevice does;
    // a proxy that swallows the first answer is: the server hands the key out, we never see it.
    let tokenPolls = 0;
    const proxy = await listen((req, res) => {
      const up = httpRequest(`${srv.url}${req.url}`, { method: req.method, headers: req.headers }, (upRes) => {
        if (req.url === '/api/cli/token' && ++tokenPolls === 1) {
          upRes.resume();
          upRes.on('end', () => req.socket.destroy());
          return;
        }
        res.writeHead(upRes.statusCode!, upRes.headers);
        upRes.pipe(res);
      });
      req.pipe(up);
    });
    try {
      const err = await caught(
        authorizeDevice({
          baseUrl: proxy.url,
          clientName: 'lost answer',
          onVerification: (v) =>
            authorizeGrant(c, v.userCode)
              .expect(200)
              .then(() => undefined),
        }),
      );
      expect(err).toBeInstanceOf(GrantConsumedError);
      expect(err).toMatchObject({ code: 'grant_consumed', status: 410 });
      expect(tokenPolls).toBe(2);
    } finally {
      await proxy.close();
    }
  }, 40_000);

  it('rejects with AbortedError promptly when the signal aborts while waiting', async () => {
    const ac = new AbortController();
    let shownAt = 0;
    const err = await caught(
      authorizeDevice({
        baseUrl: srv.url,
        clientName: 'abort me',
        signal: ac.signal,
        onVerification: () => {
          shownAt = Date.now();
          later(300, () => ac.abort('user pressed Ctrl-C'));
        },
      }),
    );
    expect(err).toBeInstanceOf(AbortedError);
    expect((err as AbortedError).cause).toBe('user pressed Ctrl-C');
    expect(Date.now() - shownAt).toBeLessThan(1500);
  });

  it('rejects with AbortedError even while onVerification is still waiting (e.g. for Enter)', async () => {
    const ac = new AbortController();
    later(300, () => ac.abort());
    const started = Date.now();
    const err = await caught(authorizeDevice({ baseUrl: srv.url, clientName: 'never ready', signal: ac.signal, onVerification: () => new Promise(() => {}) }));
    expect(err).toBeInstanceOf(AbortedError);
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it('rejects at once for an aborted signal, and with ValidationError for a name the server refuses', async () => {
    const err = await caught(authorizeDevice({ baseUrl: srv.url, clientName: 'x', signal: AbortSignal.abort(), onVerification: () => {} }));
    expect(err).toBeInstanceOf(AbortedError);
    const bad = await caught(authorizeDevice({ baseUrl: srv.url, clientName: 'x'.repeat(65), onVerification: () => {} }));
    expect(bad).toBeInstanceOf(ValidationError);
    expect(bad).toMatchObject({ status: 400, serverMessage: 'client_name: must be at most 64 characters' });
  });

  it('polls at the interval the server asks for, growing it when the server slows it down', async () => {
    // The harness clock stands still, so to the server the second poll comes 0 s
    // after the first: too fast, and it raises the interval from 5 to 10 (slow_down).
    const polls: { state: PollState; at: number }[] = [];
    let code = '';
    const started = Date.now();
    const { apiKey } = await authorizeDevice({
      baseUrl: srv.url,
      clientName: 'slow down',
      onVerification: (v) => {
        code = v.userCode;
      },
      onPoll: (state) => {
        polls.push({ state, at: Date.now() });
        if (polls.length === 2) later(0, () => authorizeGrant(c, code).expect(200));
      },
    });
    const done = Date.now();
    expect(apiKey).toMatch(LIVE_KEY_RE);
    expect(polls.map((p) => p.state)).toEqual([
      { status: 'pending', interval: 5 },
      { status: 'pending', interval: 10 },
    ]);
    expect(polls[0]!.at - started).toBeGreaterThanOrEqual(5000);
    expect(polls[1]!.at - polls[0]!.at).toBeGreaterThanOrEqual(4900);
    expect(polls[1]!.at - polls[0]!.at).toBeLessThan(9000);
    expect(done - polls[1]!.at).toBeGreaterThanOrEqual(9900);
  }, 45_000);

  it('rides out a reset connection and a 503 from a proxy, backing off, then gets the key', async () => {
    let tokenPolls = 0;
    const proxy = await listen((req, res) => {
      if (req.url === '/api/cli/token') {
        tokenPolls++;
        if (tokenPolls === 1) return void req.socket.destroy();
        if (tokenPolls === 2) {
          res.writeHead(503, { 'content-type': 'text/html' });
          return void res.end('<h1>503 Service Unavailable</h1>');
        }
      }
      const up = httpRequest(`${srv.url}${req.url}`, { method: req.method, headers: req.headers }, (upRes) => {
        res.writeHead(upRes.statusCode!, upRes.headers);
        upRes.pipe(res);
      });
      req.pipe(up);
    });
    try {
      const states: PollState[] = [];
      const { apiKey } = await authorizeDevice({
        baseUrl: proxy.url,
        clientName: 'flaky network',
        onVerification: (v) =>
          authorizeGrant(c, v.userCode)
            .expect(200)
            .then(() => undefined),
        onPoll: (s) => states.push(s),
      });
      expect(apiKey).toMatch(LIVE_KEY_RE);
      expect(tokenPolls).toBe(3);
      expect(states.map((s) => (s.status === 'retrying' ? [s.error.code, s.failures, s.waitMs] : s.status))).toEqual([
        ['network', 1, 5000],
        ['server', 2, 10_000],
      ]);
    } finally {
      await proxy.close();
    }
  }, 45_000);

  describe('against a scripted server (protocol edges the real one does not produce)', () => {
    const GRANT = {
      device_code: 'd'.repeat(64),
      user_code: 'BCDF-GHJK',
      verification_url: 'http://127.0.0.1/cli/auth?code=BCDF-GHJK',
      expires_in: 2,
      interval: 1,
    };

    it('rejects with GrantExpiredError as soon as the grant’s own time runs out, without waiting for a poll', async () => {
      const s = await scripted((r, _n, res) => json(res, 200, r.url === '/api/cli/device-code' ? GRANT : { status: 'pending', interval: 1 }));
      try {
        const started = Date.now();
        const err = await caught(authorizeDevice({ baseUrl: s.url, clientName: 'x', onVerification: () => {} }));
        const took = Date.now() - started;
        expect(err).toBeInstanceOf(GrantExpiredError);
        expect(took).toBeGreaterThanOrEqual(1900);
        expect(took).toBeLessThan(3000);
        const polls = s.seen.filter((r) => r.url === '/api/cli/token');
        expect(polls.length).toBeGreaterThanOrEqual(1);
        expect(polls.every((p) => p.at < started + 2100)).toBe(true);
        expect(JSON.parse(polls[0]!.body)).toEqual({ device_code: GRANT.device_code });
      } finally {
        await s.close();
      }
    });

    it('refuses a verification URL that is not http(s), before showing anything', async () => {
      const s = await scripted((_r, _n, res) => json(res, 200, { ...GRANT, verification_url: 'javascript:alert(1)' }));
      try {
        let shown = false;
        const err = await caught(authorizeDevice({ baseUrl: s.url, clientName: 'x', onVerification: () => void (shown = true) }));
        expect(err).toBeInstanceOf(UnexpectedResponseError);
        expect(shown).toBe(false);
      } finally {
        await s.close();
      }
    });

    it('treats a 429 to a poll as slow_down: the interval grows by 5 s', async () => {
      const s = await scripted((r, n, res) => {
        if (r.url === '/api/cli/device-code') return json(res, 200, { ...GRANT, expires_in: 600 });
        if (n === 1) return json(res, 429, { error: 'Too many requests' });
        return json(res, 200, { status: 'authorized', api_key: 'svc_live_x' });
      });
      try {
        const states: PollState[] = [];
        const { apiKey } = await authorizeDevice({ baseUrl: s.url, clientName: 'x', onVerification: () => {}, onPoll: (p) => states.push(p) });
        expect(apiKey).toBe('svc_live_x');
        expect(states).toMatchObject([{ status: 'retrying', waitMs: 6000, error: { code: 'rate_limited' } }]);
        const [first, second] = s.seen.filter((r) => r.url === '/api/cli/token');
        expect(second!.at - first!.at).toBeGreaterThanOrEqual(5900);
      } finally {
        await s.close();
      }
    }, 20_000);
  });
});

describe('credentials file helpers', () => {
  it('resolves the path: DEVICEID_CREDENTIALS_FILE, then XDG_CONFIG_HOME, then ~/.config', () => {
    expect(credentialsPath({ DEVICEID_CREDENTIALS_FILE: '/x/c.json', XDG_CONFIG_HOME: '/xdg' }, 'linux')).toBe('/x/c.json');
    expect(credentialsPath({ XDG_CONFIG_HOME: '/xdg' }, 'linux')).toBe('/xdg/deviceid/credentials.json');
    expect(credentialsPath({}, 'linux')).toBe(join(homedir(), '.config', 'deviceid', 'credentials.json'));
  });

  it('saves and loads per service, prefers DEVICEID_API_KEY, and never overwrites a file it does not understand', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'deviceid-cred-'));
    try {
      const file = join(dir, 'sub', 'credentials.json');
      const cred = { apiKey: 'svc_live_a', clientName: 'a', createdAt: '2026-01-01T00:00:00.000Z' };
      expect(await loadCredential('https://a.example', file)).toBeUndefined();
      expect(await saveCredential('https://a.example/', cred, file)).toBe(file);
      await saveCredential('https://b.example', { ...cred, apiKey: 'svc_live_b' }, file);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(await loadCredential('https://a.example', file)).toEqual(cred);
      expect(await loadApiKey('https://b.example', { DEVICEID_CREDENTIALS_FILE: file })).toBe('svc_live_b');
      expect(await loadApiKey('https://b.example', { DEVICEID_CREDENTIALS_FILE: file, DEVICEID_API_KEY: 'svc_live_env' })).toBe('svc_live_env');

      const foreign = join(dir, 'foreign.json');
      writeFileSync(foreign, 'not json at all');
      await expect(saveCredential('https://a.example', cred, foreign)).rejects.toBeInstanceOf(CredentialsFileError);
      expect(readFileSync(foreign, 'utf8')).toBe('not json at all');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
