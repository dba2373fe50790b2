import { copyFileSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { normalizeIp } from '../../../server/edge/address.js';
import { listKindOf, loadLists, parseList, type IpLists, type ListKind } from '../../../server/edge/lists.js';
import { RangeSetBuilder } from '../../../server/edge/ranges.js';

const fixtures = join(import.meta.dirname, '../../fixtures/edge');
const root = mkdtempSync(join(tmpdir(), 'deviceid-lists-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

let n = 0;
const freshDir = (): string => join(root, `d${n++}`);
const ip = (s: string) => normalizeIp(s)!;
/** Moves a file's mtime so a change is seen even within one clock tick. */
const touch = (file: string, secondsAhead: number): void => {
  const t = new Date(Date.now() + secondsAhead * 1000);
  utimesSync(file, t, t);
};

const open: IpLists[] = [];
afterEach(() => {
  for (const l of open.splice(0)) l.close();
});
async function load(dir: string, extra: Partial<Parameters<typeof loadLists>[0]> = {}): Promise<IpLists> {
  const lists = await loadLists({ dir, pollMs: 3_600_000, ...extra });
  open.push(lists);
  return lists;
}

describe('listKindOf', () => {
  it.each([
    ['tor-exits.txt', 'tor'],
    ['tor-exit-addresses.txt', 'tor'],
    ['blocklist.txt', 'blocklist'],
    ['blocklist-firehol-level1.netset', 'blocklist'],
    ['firehol_level1.netset', 'blocklist'],
    ['datacenter-x4bnet-ipv4.txt', 'datacenter'],
    ['vpn-ipv6.txt', 'vpn'],
    ['proxy.txt', 'proxy'],
    ['README.md', null],
    ['notes.txt', null],
    ['.tor-exits.txt.123.tmp', null],
    ['.hidden.netset', null],
  ] as const)('%s → %s', (name, kind) => {
    expect(listKindOf(name)).toBe(kind);
  });
});

describe('parseList', () => {
  it('reads the Tor exit-addresses format', () => {
    const b = new RangeSetBuilder();
    expect(parseList('ExitNode ABC\nPublished 2026-11-20 10:41:29\nExitAddress 185.220.101.10 2026-11-21 11:13:51\n', b)).toEqual({ entries: 1, rejected: 0 });
    expect(b.build().has(ip('185.220.101.10'))).toBe(true);
  });

  it('counts what it cannot read instead of guessing', () => {
    const b = new RangeSetBuilder();
    expect(parseList('# comment\n\n10.0.0.0/8\n1.2.3.4 ; SBL1\n<html>\n999.1.1.1\n2001:db8::/32 extra columns\n', b)).toEqual({ entries: 3, rejected: 2 });
  });
});

describe('loadLists', () => {
  it('starts empty when the directory does not exist, but always knows Cloudflare', async () => {
    const lists = await load(freshDir());
    expect(lists.status()).toEqual({ tor: null, blocklist: null, datacenter: null, vpn: null, proxy: null });
    expect(lists.check(ip('185.220.101.10'))).toEqual({ tor: false, blocklist: false, datacenter: false, vpn: false, proxy: false, cdn: false });
    expect(lists.check(ip('104.16.0.1')).cdn).toBe(true);
    expect(lists.check(ip('2606:4700::6810:84e5')).cdn).toBe(true);
    expect(lists.check(ip('8.8.8.8')).cdn).toBe(false);
  });

  it('loads each kind from its files and says what it loaded', async () => {
    const dir = freshDir();
    mkdirSync(dir);
    copyFileSync(join(fixtures, 'tor-exit-addresses.txt'), join(dir, 'tor-exits.txt'));
    copyFileSync(join(fixtures, 'tor-bulk-exit-list.txt'), join(dir, 'tor-bulk.txt'));
    copyFileSync(join(fixtures, 'firehol-sample.netset'), join(dir, 'firehol_level1.netset'));
    copyFileSync(join(fixtures, 'proxy-sample.txt'), join(dir, 'proxy-public.txt'));
    writeFileSync(join(dir, 'datacenter-ipv4.txt'), '34.64.0.0/10\n');
    writeFileSync(join(dir, 'vpn-ipv6.txt'), '2a0d:5600:1::/48\n');
    writeFileSync(join(dir, 'notes.txt'), '8.8.8.8\n');
    const lists = await load(dir);

    expect(lists.check(ip('185.220.101.10')).tor).toBe(true);
    expect(lists.check(ip('2a0b:f4c2::10')).tor).toBe(true);
    expect(lists.check(ip('::ffff:185.220.100.241')).tor).toBe(true);
    expect(lists.check(ip('185.220.101.12')).tor).toBe(false);
    expect(lists.check(ip('45.15.1.1')).blocklist).toBe(true);
    expect(lists.check(ip('61.155.222.211')).blocklist).toBe(true);
    expect(lists.check(ip('61.155.222.212')).blocklist).toBe(false);
    expect(lists.check(ip('34.100.0.1')).datacenter).toBe(true);
    expect(lists.check(ip('2a0d:5600:1::99')).vpn).toBe(true);
    expect(lists.check(ip('103.152.112.145')).proxy).toBe(true);
    expect(lists.check(ip('2001:db8:1::5')).proxy).toBe(true);
    expect(lists.check(ip('8.210.83.33')).proxy).toBe(true);
    expect(lists.check(ip('8.8.8.8'))).toMatchObject({ tor: false, blocklist: false, datacenter: false, vpn: false, proxy: false });

    const status = lists.status();
    expect(status.tor?.files.map((f) => [f.name, f.entries, f.rejected])).toEqual([
      ['tor-bulk.txt', 3, 0],
      ['tor-exits.txt', 3, 0],
    ]);
    // .10/.11 and .240/.241 are adjacent and merge.
    expect(status.tor?.ranges).toEqual({ v4: 3, v6: 1 });
    expect(status.proxy?.files[0]).toMatchObject({ name: 'proxy-public.txt', entries: 3, rejected: 1 });
    expect(status.blocklist?.files[0]?.entries).toBe(4);
    expect(status.datacenter?.loadedAt).toBeInstanceOf(Date);
  });

  it('reads AS numbers in datacenter and VPN lists as whole networks, and nowhere else', async () => {
    const dir = freshDir();
    mkdirSync(dir);
    writeFileSync(join(dir, 'datacenter-asn.txt'), 'AS14061 # DigitalOcean\nas16276\n34.64.0.0/10\nAS99999999999\n');
    writeFileSync(join(dir, 'vpn-asn.txt'), 'AS9009 # M247, GB (NordVPN)\n');
    writeFileSync(join(dir, 'tor-exits.txt'), 'AS60729\n185.220.101.10\n');
    const lists = await load(dir);
    expect(lists.checkAsn(14061)).toEqual({ datacenter: true, vpn: false });
    expect(lists.checkAsn(16276)).toEqual({ datacenter: true, vpn: false });
    expect(lists.checkAsn(9009)).toEqual({ datacenter: false, vpn: true });
    expect(lists.checkAsn(60729)).toEqual({ datacenter: false, vpn: false });
    expect(lists.checkAsn(null)).toEqual({ datacenter: false, vpn: false });
    // An AS on a list says nothing about one address: that is what the address entries are for.
    expect(lists.check(ip('34.100.0.1')).datacenter).toBe(true);
    const status = lists.status();
    expect(status.datacenter).toMatchObject({ asns: 2, ranges: { v4: 1, v6: 0 } });
    expect(status.datacenter?.files[0]).toMatchObject({ entries: 3, rejected: 1 });
    expect(status.vpn?.asns).toBe(1);
    expect(status.tor?.files[0]).toMatchObject({ entries: 1, rejected: 1 });
  });

  it('re-reads a file when it changes and forgets it when it goes', async () => {
    const dir = freshDir();
    mkdirSync(dir);
    const file = join(dir, 'tor-exits.txt');
    writeFileSync(file, '192.0.2.1\n');
    const reloads: [ListKind, number | null][] = [];
    const lists = await load(dir, { onReload: (kind, s) => reloads.push([kind, s?.files[0]?.entries ?? null]) });
    expect(lists.check(ip('192.0.2.1')).tor).toBe(true);

    await lists.refresh();
    expect(reloads).toEqual([['tor', 1]]); // unchanged file: not re-read

    writeFileSync(file, '192.0.2.2\n192.0.2.3\n');
    touch(file, 5);
    await lists.refresh();
    expect(lists.check(ip('192.0.2.1')).tor).toBe(false);
    expect(lists.check(ip('192.0.2.3')).tor).toBe(true);

    rmSync(file);
    await lists.refresh();
    expect(lists.check(ip('192.0.2.3')).tor).toBe(false);
    expect(lists.status().tor).toBeNull();
    expect(reloads).toEqual([
      ['tor', 1],
      ['tor', 2],
      ['tor', null],
    ]);
  });

  it('picks up new files by polling, and stops when closed', async () => {
    const dir = freshDir();
    mkdirSync(dir);
    let reloaded: () => void = () => {};
    const lists = await load(dir, { pollMs: 20, onReload: () => reloaded() });
    const seen = new Promise<void>((resolve) => (reloaded = resolve));
    writeFileSync(join(dir, 'vpn.txt'), '198.51.100.0/24\n');
    await seen;
    expect(lists.check(ip('198.51.100.77')).vpn).toBe(true);

    lists.close();
    let after = 0;
    reloaded = () => after++;
    writeFileSync(join(dir, 'proxy.txt'), '198.51.100.1\n');
    await new Promise((r) => setTimeout(r, 100));
    expect(after).toBe(0);
    expect(lists.check(ip('198.51.100.1')).proxy).toBe(false);
  });

  it('keeps the loaded sets when the directory cannot be read', async () => {
    const dir = freshDir();
    mkdirSync(dir);
    writeFileSync(join(dir, 'blocklist.txt'), '203.0.113.0/24\n');
    const errors: Error[] = [];
    const lists = await load(dir, { onError: (e) => errors.push(e) });
    rmSync(dir, { recursive: true });
    writeFileSync(dir, 'not a directory');
    await lists.refresh();
    expect(errors.map((e) => (e as NodeJS.ErrnoException).code)).toEqual(['ENOTDIR']);
    expect(lists.check(ip('203.0.113.5')).blocklist).toBe(true);
    // A directory bearing a list's name is not a list.
    rmSync(dir);
    mkdirSync(join(dir, 'tor-exits.txt'), { recursive: true });
    await lists.refresh();
    expect(lists.status()).toMatchObject({ tor: null, blocklist: null });
  });
});
