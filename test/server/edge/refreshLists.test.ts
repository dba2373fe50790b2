import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadLists } from '../../../server/edge/lists.js';
import { normalizeIp } from '../../../server/edge/address.js';

interface Source {
  file: string;
  url: string;
  minEntries?: number;
}
type Result = { file: string; ok: true; entries: number } | { file: string; ok: false; error: string };
interface RefreshModule {
  DEFAULT_SOURCES: Source[];
  refreshLists(opts: { dir: string; sources?: Source[]; fetch?: typeof fetch; timeoutMs?: number }): Promise<Result[]>;
}

const script = join(import.meta.dirname, '../../../scripts/refresh-lists.mjs');
const fixtures = join(import.meta.dirname, '../../fixtures/edge');
const torList = Array.from({ length: 150 }, (_, i) => `185.220.${100 + (i >> 8)}.${i & 255}`).join('\n') + '\n';

describe('scripts/refresh-lists.mjs', () => {
  const root = mkdtempSync(join(tmpdir(), 'deviceid-refresh-'));
  let server: http.Server;
  let base: string;
  let mod: RefreshModule;
  const hits: string[] = [];

  beforeAll(async () => {
    mod = (await import(pathToFileURL(script).href)) as RefreshModule;
    server = http.createServer((req, res) => {
      hits.push(`${req.url} ${req.headers['user-agent']}`);
      const body: Record<string, string> = {
        '/tor': torList,
        '/firehol': readFileSync(join(fixtures, 'firehol-sample.netset'), 'utf8'),
        '/exit-addresses': readFileSync(join(fixtures, 'tor-exit-addresses.txt'), 'utf8'),
        '/html': '<!doctype html>\n<html>\n<body>\nService unavailable\n</body>\n</html>\n',
        '/short': '1.2.3.4\n5.6.7.8\n',
        '/vpn-asn': 'AS9009 # M247, GB\nAS39351 # 31173 Services AB\n',
      };
      if (req.url === '/slow') return; // never answers
      const b = body[req.url ?? ''];
      if (b === undefined) {
        res.statusCode = 404;
        return res.end('not found');
      }
      res.end(b);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    rmSync(root, { recursive: true, force: true });
  });

  it('points at the public sources by default, under names lists.ts understands', () => {
    expect(mod.DEFAULT_SOURCES.map((s) => s.url)).toEqual([
      'https://check.torproject.org/torbulkexitlist',
      'https://raw.githubusercontent.com/firehol/blocklist-ipsets/master/firehol_level1.netset',
      'https://raw.githubusercontent.com/X4BNet/lists_vpn/main/output/datacenter/ipv4.txt',
      'https://raw.githubusercontent.com/X4BNet/lists_vpn/main/output/datacenter/ipv6.txt',
      'https://raw.githubusercontent.com/X4BNet/lists_vpn/main/output/vpn/ipv4.txt',
      'https://raw.githubusercontent.com/X4BNet/lists_vpn/main/output/vpn/ipv6.txt',
      'https://raw.githubusercontent.com/X4BNet/lists_vpn/main/input/datacenter/ASN.txt',
      'https://raw.githubusercontent.com/X4BNet/lists_vpn/main/input/vpn/ASN.txt',
    ]);
    expect(mod.DEFAULT_SOURCES.map((s) => s.file)).toEqual([
      'tor-exits.txt',
      'blocklist-firehol-level1.netset',
      'datacenter-x4bnet-ipv4.txt',
      'datacenter-x4bnet-ipv6.txt',
      'vpn-x4bnet-ipv4.txt',
      'vpn-x4bnet-ipv6.txt',
      'datacenter-x4bnet-asn.txt',
      'vpn-x4bnet-asn.txt',
    ]);
  });

  it('downloads lists that the server then loads', async () => {
    const dir = join(root, 'ok');
    const results = await mod.refreshLists({
      dir,
      sources: [
        { file: 'tor-exits.txt', url: `${base}/tor`, minEntries: 100 },
        { file: 'blocklist-firehol-level1.netset', url: `${base}/firehol`, minEntries: 4 },
        { file: 'tor-exit-addresses.txt', url: `${base}/exit-addresses` },
        { file: 'vpn-x4bnet-asn.txt', url: `${base}/vpn-asn`, minEntries: 2 },
      ],
    });
    expect(results).toEqual([
      { file: 'tor-exits.txt', ok: true, entries: 150 },
      { file: 'blocklist-firehol-level1.netset', ok: true, entries: 4 },
      { file: 'tor-exit-addresses.txt', ok: true, entries: 3 },
      { file: 'vpn-x4bnet-asn.txt', ok: true, entries: 2 },
    ]);
    expect(readdirSync(dir).sort()).toEqual(['blocklist-firehol-level1.netset', 'tor-exit-addresses.txt', 'tor-exits.txt', 'vpn-x4bnet-asn.txt']);
    expect(hits.at(-1)).toMatch(/deviceid-refresh-lists/);
    const lists = await loadLists({ dir, pollMs: 3_600_000 });
    lists.close();
    expect(lists.check(normalizeIp('185.220.100.7')!).tor).toBe(true);
    expect(lists.check(normalizeIp('2a0b:f4c2::10')!).tor).toBe(true);
    expect(lists.check(normalizeIp('45.9.1.1')!).blocklist).toBe(true);
    expect(lists.checkAsn(39351).vpn).toBe(true);
  });

  it('keeps the previous file when a download fails or does not look like a list', async () => {
    const dir = join(root, 'keep');
    mkdirSync(dir);
    for (const f of ['a.txt', 'b.txt', 'c.txt', 'd.txt', 'e.txt']) writeFileSync(join(dir, f), 'previous\n');
    const results = await mod.refreshLists({
      dir,
      timeoutMs: 300,
      sources: [
        { file: 'a.txt', url: `${base}/missing` },
        { file: 'b.txt', url: `${base}/html` },
        { file: 'c.txt', url: `${base}/short`, minEntries: 100 },
        { file: 'd.txt', url: `${base}/slow` },
        { file: 'e.txt', url: 'http://127.0.0.1:1/' },
      ],
    });
    expect(results.map((r) => [r.file, r.ok])).toEqual([
      ['a.txt', false],
      ['b.txt', false],
      ['c.txt', false],
      ['d.txt', false],
      ['e.txt', false],
    ]);
    expect(results.map((r) => (r.ok ? '' : r.error))).toEqual([
      'HTTP 404',
      expect.stringMatching(/not a list|only 0 entries/),
      'only 2 entries (expected at least 100)',
      expect.stringMatching(/timeout|aborted/i),
      expect.stringMatching(/fetch failed/),
    ]);
    // Old files untouched, no temporary files left behind.
    expect(readdirSync(dir).sort()).toEqual(['a.txt', 'b.txt', 'c.txt', 'd.txt', 'e.txt']);
    for (const f of readdirSync(dir)) expect(readFileSync(join(dir, f), 'utf8')).toBe('previous\n');
  });

  it('refuses file names that would leave the directory', async () => {
    const results = await mod.refreshLists({ dir: join(root, 'names'), sources: [{ file: '../escape.txt', url: `${base}/tor` }] });
    expect(results).toEqual([{ file: '../escape.txt', ok: false, error: 'file name must be a plain name' }]);
  });

  it('runs from the command line with --dir and --source, exit code telling the outcome', async () => {
    const run = (args: string[]) =>
      new Promise<{ code: number; stdout: string }>((resolve) => {
        execFile(process.execPath, [script, ...args], { timeout: 20_000 }, (err, stdout) =>
          resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout }),
        );
      });
    const dir = join(root, 'cli');
    const ok = await run(['--dir', dir, '--source', `tor-exits.txt=${base}/tor`]);
    expect(ok).toEqual({ code: 0, stdout: 'ok     tor-exits.txt: 150 entries\n' });
    expect(readFileSync(join(dir, 'tor-exits.txt'), 'utf8')).toBe(torList);

    const failed = await run(['--dir', dir, '--source', `tor-exits.txt=${base}/short`]);
    expect(failed.code).toBe(1);
    expect(failed.stdout).toMatch(/^FAILED tor-exits.txt: only 2 entries \(expected at least 100\) \(previous file kept\)/);
    expect(readFileSync(join(dir, 'tor-exits.txt'), 'utf8')).toBe(torList);

    expect((await run(['--bogus'])).code).toBe(2);
  });
});
