import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOT_LISTS } from '../../../server/bots/catalog.js';
import { BotNames } from '../../../server/bots/verify.js';

interface BotSource {
  list: string;
  urls: string[];
  minEntries?: number;
}
type Result = { file: string; ok: true; entries: number } | { file: string; ok: false; error: string };
interface RefreshModule {
  BOT_SOURCES: BotSource[];
  refreshBotLists(opts: { dir: string; sources?: BotSource[]; fetch?: typeof fetch; timeoutMs?: number; now?: () => Date }): Promise<Result[]>;
}

const script = join(import.meta.dirname, '../../../scripts/refresh-lists.mjs');
const googleFormat = JSON.stringify({
  creationTime: '2026-11-27T14:46:34.000000',
  prefixes: [{ ipv6Prefix: '2001:4860:4801:10::/64' }, { ipv4Prefix: '66.249.64.0/27' }, { ipv4Prefix: '66.249.66.0/27' }],
});
const bodies: Record<string, string> = {
  '/google': googleFormat,
  '/ahrefs': JSON.stringify({ ips: [{ ip_address: '5.39.1.224' }, { ip_address: '5.39.1.225' }] }),
  '/v4': '# probes\n5.172.196.188\n13.232.220.164\n',
  '/v6': '2a02:6ea0:c305::4041\n',
  '/html': '<!doctype html><html><body>Moved</body></html>',
  '/wide': JSON.stringify({ prefixes: [{ ipv4Prefix: '0.0.0.0/0' }, { ipv4Prefix: '66.249.64.0/27' }] }),
  '/empty': JSON.stringify({ creationTime: 'x', prefixes: [] }),
  '/gptbot': JSON.stringify({
    creationTime: '2026-11-01T00:00:00',
    prefixes: [{ ipv4Prefix: '192.0.2.0/24' }, { ipv4Prefix: '198.51.100.0/25' }, { ipv4Prefix: '203.0.113.0/26' }],
  }),
};

describe('scripts/refresh-lists.mjs: bot lists', () => {
  const root = mkdtempSync(join(tmpdir(), 'deviceid-botrefresh-'));
  let server: http.Server;
  let base: string;
  let mod: RefreshModule;
  const now = () => new Date('2026-11-28T06:00:00Z');

  beforeAll(async () => {
    mod = (await import(pathToFileURL(script).href)) as RefreshModule;
    server = http.createServer((req, res) => {
      const b = bodies[req.url ?? ''];
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

  it('has an operator URL for every list the catalog verifies by, except X’s, which is a help page', () => {
    expect(BOT_LISTS.filter((id) => !mod.BOT_SOURCES.some((s) => s.list === id))).toEqual(['twitterbot']);
    for (const s of mod.BOT_SOURCES) for (const u of s.urls) expect(u).toMatch(/^https:\/\//);
  });

  it('writes the operators’ formats in the shipped form, which BotNames then prefers', async () => {
    const dir = join(root, 'ok');
    const results = await mod.refreshBotLists({
      dir,
      now,
      sources: [
        { list: 'googlebot', urls: [`${base}/google`] },
        { list: 'ahrefsbot', urls: [`${base}/ahrefs`] },
        { list: 'pingdom', urls: [`${base}/v4`, `${base}/v6`] },
      ],
    });
    expect(results).toEqual([
      { file: 'googlebot.json', ok: true, entries: 3 },
      { file: 'ahrefsbot.json', ok: true, entries: 2 },
      { file: 'pingdom.json', ok: true, entries: 3 },
    ]);
    const google = JSON.parse(readFileSync(join(dir, 'googlebot.json'), 'utf8'));
    expect(google).toEqual({
      source: `${base}/google, downloaded 2026-11-28 (creationTime 2026-11-27T14:46:34.000000)`,
      date: '2026-11-28',
      prefixes: ['2001:4860:4801:10::/64', '66.249.64.0/27', '66.249.66.0/27'],
    });
    expect(JSON.parse(readFileSync(join(dir, 'pingdom.json'), 'utf8')).prefixes).toEqual(['5.172.196.188/32', '13.232.220.164/32', '2a02:6ea0:c305::4041/128']);
    const names = new BotNames({ now: () => 0, dataDir: dir, resolver: { reverse: async () => [], resolve: async () => [] } });
    expect(names.listDates().googlebot).toBe('2026-11-28');
    expect(names.classify('Googlebot/2.1 (+http://www.google.com/bot.html)', '66.249.66.9')).toMatchObject({ identity: 'verified', listDate: '2026-11-28' });
    expect(names.classify('Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)', '5.39.1.226')?.identity).toBe('spoofed');
  });

  it('keeps the previous list when a download fails, is not a list, is empty or vouches for too much', async () => {
    const dir = join(root, 'keep');
    mkdirSync(dir);
    for (const l of ['a', 'b', 'c', 'd', 'e']) writeFileSync(join(dir, `${l}.json`), 'previous\n');
    const results = await mod.refreshBotLists({
      dir,
      now,
      sources: [
        { list: 'a', urls: [`${base}/missing`] },
        { list: 'b', urls: [`${base}/html`] },
        { list: 'c', urls: [`${base}/wide`] },
        { list: 'd', urls: [`${base}/empty`] },
        { list: 'e', urls: [`${base}/v4`, `${base}/missing`] },
      ],
    });
    expect(results.map((r) => (r.ok ? 'ok' : r.error))).toEqual([
      'HTTP 404',
      expect.stringMatching(/not CIDRs/),
      expect.stringMatching(/1 entries .* not CIDRs \(or are implausibly wide\)/),
      expect.stringMatching(/no prefixes/),
      'HTTP 404',
    ]);
    expect(readdirSync(dir).sort()).toEqual(['a.json', 'b.json', 'c.json', 'd.json', 'e.json']);
    for (const f of readdirSync(dir)) expect(readFileSync(join(dir, f), 'utf8')).toBe('previous\n');
    expect((await mod.refreshBotLists({ dir, sources: [{ list: '../x', urls: [`${base}/v4`] }] }))[0]).toMatchObject({ ok: false });
  });

  it('takes a bot list’s --source by its name and writes it under DIR/bots', async () => {
    const dir = join(root, 'cli');
    const out = await new Promise<{ code: number; stdout: string }>((resolve) => {
      execFile(process.execPath, [script, '--dir', dir, '--source', `gptbot=${base}/gptbot`], { timeout: 20_000 }, (err, stdout) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout }),
      );
    });
    expect(out).toEqual({ code: 0, stdout: 'ok     gptbot.json: 3 entries\n' });
    expect(readdirSync(dir)).toEqual(['bots']);
    expect(JSON.parse(readFileSync(join(dir, 'bots', 'gptbot.json'), 'utf8')).prefixes).toEqual(['192.0.2.0/24', '198.51.100.0/25', '203.0.113.0/26']);
  });
});
