import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, DEFAULT_PLANS, loadConfig } from '../../server/config.js';

const dir = mkdtempSync(join(tmpdir(), 'deviceid-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('config', () => {
  it('has documented defaults', () => {
    const c = loadConfig({ DATA_DIR: dir });
    expect(c.port).toBe(8080);
    expect(c.baseUrl).toBe('http://localhost:8080');
    expect(c.mongodbUri).toBeUndefined();
    expect(c.plans).toEqual(DEFAULT_PLANS);
    expect(c.logLevel).toBe('info');
    expect(c.trustProxy).toEqual({ hops: 0, cidrs: [] });
    expect(c.edgeData).toBe('shared');
  });

  it('METRICS_PORT: off unless set; loopback by default; beyond loopback only with METRICS_TOKEN', () => {
    expect(loadConfig({ DATA_DIR: dir }).metrics).toBeNull();
    expect(loadConfig({ DATA_DIR: dir, METRICS_PORT: '9464' }).metrics).toEqual({ port: 9464, host: '127.0.0.1', token: null });
    for (const host of ['localhost', '::1', '127.0.0.2'])
      expect(loadConfig({ DATA_DIR: dir, METRICS_PORT: '9464', METRICS_HOST: host }).metrics?.host).toBe(host);
    for (const host of ['0.0.0.0', '::', '10.0.0.5', '127.example.com']) {
      expect(() => loadConfig({ DATA_DIR: dir, METRICS_PORT: '9464', METRICS_HOST: host })).toThrow(
        new ConfigError(`Invalid METRICS_HOST: ${host} is reachable from other machines; set METRICS_TOKEN (or bind to 127.0.0.1)`),
      );
    }
    const token = 't'.repeat(32);
    expect(loadConfig({ DATA_DIR: dir, METRICS_PORT: '9464', METRICS_HOST: '0.0.0.0', METRICS_TOKEN: token }).metrics).toEqual({
      port: 9464,
      host: '0.0.0.0',
      token,
    });
    expect(() => loadConfig({ DATA_DIR: dir, METRICS_PORT: '9464', METRICS_TOKEN: 'short' })).toThrow('Invalid METRICS_TOKEN: must be at least 32 characters');
    expect(() => loadConfig({ DATA_DIR: dir, METRICS_PORT: '70000' })).toThrow(/^Invalid METRICS_PORT/);
  });

  it('EDGE_DATA: shared or per-worker', () => {
    expect(loadConfig({ DATA_DIR: dir, EDGE_DATA: 'per-worker' }).edgeData).toBe('per-worker');
    expect(loadConfig({ DATA_DIR: dir, EDGE_DATA: 'shared' }).edgeData).toBe('shared');
  });

  it('HTTP limits: REQUEST_TIMEOUT_MS, HEADERS_TIMEOUT_MS, KEEP_ALIVE_TIMEOUT_MS, MAX_CONNECTIONS', () => {
    expect(loadConfig({ DATA_DIR: dir }).httpLimits).toEqual({
      requestTimeoutMs: 30_000,
      headersTimeoutMs: 10_000,
      keepAliveTimeoutMs: 5_000,
      maxConnections: 1_000,
    });
    const set = { REQUEST_TIMEOUT_MS: '60000', HEADERS_TIMEOUT_MS: '60000', KEEP_ALIVE_TIMEOUT_MS: '65000', MAX_CONNECTIONS: '20000' };
    expect(loadConfig({ DATA_DIR: dir, ...set }).httpLimits).toEqual({
      requestTimeoutMs: 60_000,
      headersTimeoutMs: 60_000,
      keepAliveTimeoutMs: 65_000,
      maxConnections: 20_000,
    });
  });

  it('generates the server secret once and keeps it in DATA_DIR (mode 0600)', () => {
    const a = loadConfig({ DATA_DIR: dir }).serverSecret;
    const b = loadConfig({ DATA_DIR: dir }).serverSecret;
    expect(a).toHaveLength(43);
    expect(b).toBe(a);
    expect(readFileSync(join(dir, 'server-secret'), 'utf8').trim()).toBe(a);
    expect(statSync(join(dir, 'server-secret')).mode & 0o777).toBe(0o600);
  });

  it('merges a PLANS override into the default table', () => {
    const c = loadConfig({ DATA_DIR: dir, PLANS: '{"free":{"monthly":5}}' });
    expect(c.plans.free).toEqual({ rps: 10, monthly: 5 });
    expect(c.plans.scale).toEqual(DEFAULT_PLANS.scale);
  });

  it('parses TRUST_PROXY as a hop count or a CIDR list', () => {
    expect(loadConfig({ DATA_DIR: dir, TRUST_PROXY: '2' }).trustProxy).toEqual({ hops: 2, cidrs: [] });
    expect(loadConfig({ DATA_DIR: dir, TRUST_PROXY: '10.0.0.0/8, ::1' }).trustProxy).toEqual({ hops: 0, cidrs: ['10.0.0.0/8', '::1'] });
  });

  it.each([
    [{ PORT: 'abc' }, /^Invalid PORT: /],
    [{ PORT: '70000' }, /^Invalid PORT: /],
    [{ BASE_URL: 'not a url' }, /^Invalid BASE_URL: /],
    [{ MONGODB_URI: 'http://x' }, /^Invalid MONGODB_URI: must start with mongodb:\/\//],
    [{ LOG_LEVEL: 'loud' }, /^Invalid LOG_LEVEL: /],
    [{ PLANS: '{' }, /^Invalid PLANS: is not valid JSON/],
    [{ PLANS: '{"gold":{"rps":1}}' }, /^Invalid PLANS: /],
    [{ PLANS: '{"free":{"rps":-1}}' }, /^Invalid PLANS: free\.rps: /],
    [{ TRUST_PROXY: 'everyone' }, /^Invalid TRUST_PROXY: "everyone" is not an IP address or CIDR/],
    [{ SERVER_SECRET: 'short' }, /^Invalid SERVER_SECRET: /],
    [{ EDGE_DATA: 'mmap' }, /^Invalid EDGE_DATA: /],
    [{ VISITOR_CACHE_SIZE: '-1' }, /^Invalid VISITOR_CACHE_SIZE: /],
    [{ BODY_BUDGET_BYTES: 'lots' }, /^Invalid BODY_BUDGET_BYTES: /],
    [{ REQUEST_TIMEOUT_MS: '0' }, /^Invalid REQUEST_TIMEOUT_MS: /],
    [{ HEADERS_TIMEOUT_MS: 'soon' }, /^Invalid HEADERS_TIMEOUT_MS: /],
    [{ HEADERS_TIMEOUT_MS: '40000' }, /^Invalid HEADERS_TIMEOUT_MS: must not exceed REQUEST_TIMEOUT_MS \(30000\)/],
    [{ KEEP_ALIVE_TIMEOUT_MS: '500' }, /^Invalid KEEP_ALIVE_TIMEOUT_MS: /],
    [{ MAX_CONNECTIONS: '0' }, /^Invalid MAX_CONNECTIONS: /],
    [{ MAX_CONNECTIONS: '1.5' }, /^Invalid MAX_CONNECTIONS: /],
    [{ PASSWORD_CHECK_QUEUE: '0' }, /^Invalid PASSWORD_CHECK_QUEUE: /],
    [{ PASSWORD_CHECK_TIMEOUT_MS: 'soon' }, /^Invalid PASSWORD_CHECK_TIMEOUT_MS: /],
  ])('rejects %o with one line naming the variable', (env, message) => {
    expect(() => loadConfig({ DATA_DIR: dir, ...env })).toThrow(ConfigError);
    expect(() => loadConfig({ DATA_DIR: dir, ...env })).toThrow(message);
  });

  it('`npm start` with bad config prints one line naming the variable and exits 1', () => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'server/main.ts'], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, PORT: 'abc', DATA_DIR: dir },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(r.status).toBe(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^deviceid: Invalid PORT: /);
  });
});
