// Related visitors' decisions (server/identification/related.ts) on records:
// the device key and the lists a visitor is on, the GPU as engines name it,
// each likelihood ratio, the crowd of look-alikes, merges and deletions, the
// threshold, the evidence family and the order.
import { describe, expect, it } from 'vitest';
import { RELATED_THRESHOLD } from '../../../contract/visitors.js';
import type { Components } from '../../../server/identification/components.js';
import type { VisitorRecord } from '../../../server/identification/linker.js';
import {
  deviceKey,
  gpuMaker,
  gpuModel,
  pairEvidence,
  RELATED_PRIOR_ODDS,
  relatedIndexKey,
  relatedKeysOf,
  relatedOf,
} from '../../../server/identification/related.js';
import type { RelatedList } from '../../../server/store/identity.js';

const CHROME: Components = {
  browser: 'Chrome|Windows',
  platform: 'Win32',
  hardware: '[8,8,255]',
  timezone: 'Europe/Berlin',
  webgl: 'Google Inc. (NVIDIA)|ANGLE (NVIDIA, NVIDIA GeForce RTX 3060 (0x00002503) Direct3D11 vs_5_0 ps_5_0, D3D11)',
  screen: '1920x1080',
  color: '[24,"srgb"]',
  touch: '{"maxTouchPoints":0}',
  audio: 'a1|48000',
  fonts: 'Arial,Calibri,Cambria,Consolas',
  languages: 'en-US,en',
};
/** The same machine in Edge: the same engine as Chrome. */
const EDGE: Components = { ...CHROME, browser: 'Edge|Windows', audio: 'e1|48000' };
/** And in Firefox, which names a representative of the GPU's family. */
const FIREFOX: Components = {
  ...CHROME,
  browser: 'Firefox|Windows',
  hardware: '[8,null,255]',
  webgl: 'Mozilla|ANGLE (NVIDIA, NVIDIA GeForce GTX 980 Direct3D11 vs_5_0 ps_5_0), or similar',
  audio: 'f1|48000',
};

const rec = (id: string, components: Components[], prefixes: [string, number][] = [['81.2.69', 1000]], extra: Partial<VisitorRecord> = {}): VisitorRecord => ({
  id,
  components,
  visitCount: 1,
  firstSeenAt: 0,
  lastSeenAt: 1000,
  prefixes: prefixes.map(([p, last]) => ({ p, n: 1, last })),
  asns: [],
  novelPrefixes: 0,
  novelAsns: 0,
  webkit: false,
  tokens: [],
  linked: [],
  suspects: [],
  residual: null,
  mergedInto: null,
  highRecall: null,
  ...extra,
});

const resolver = (records: VisitorRecord[]) => {
  const by = new Map(records.map((r) => [r.id, r]));
  return (id: string): VisitorRecord | null => {
    let r = by.get(id) ?? null;
    while (r?.mergedInto) r = by.get(r.mergedInto) ?? null;
    return r;
  };
};
const list = (visitorIds: string[], n = visitorIds.length, prefix = '81.2.69'): RelatedList => ({ prefix, visitorIds, n });

describe('device key and lists', () => {
  it('is the OS, platform and time zone: alike in every browser of a machine, null when one is missing', () => {
    expect(deviceKey(CHROME)).toBe(deviceKey(FIREFOX));
    for (const change of [{ browser: 'Chrome|Linux' }, { platform: 'Linux x86_64' }, { timezone: 'Europe/Paris' }])
      expect(deviceKey({ ...CHROME, ...change }), JSON.stringify(change)).not.toBe(deviceKey(CHROME));
    // Not the hardware: Safari on a Mac reports 8 cores whatever the chip, Firefox no memory.
    expect(deviceKey({ ...CHROME, hardware: '[4,4,255]' })).toBe(deviceKey(CHROME));
    expect(deviceKey({ ...CHROME, hardware: undefined })).toBe(deviceKey(CHROME));
    for (const missing of ['browser', 'platform', 'timezone'] as const) {
      const { [missing]: _, ...rest } = CHROME;
      expect(deviceKey(rest), missing).toBeNull();
    }
    expect(deviceKey(CHROME)).toMatch(/^[\w-]{24}$/);
  });

  it('keys a list by project, device and prefix, on fixed networks only', () => {
    const home = { prefix: '81.2.69', kind: 'fixed' } as const;
    expect(relatedIndexKey('prj_a', CHROME, home)).toBe(`prj_a|${deviceKey(CHROME)}|81.2.69`);
    expect(relatedIndexKey('prj_a', CHROME, { prefix: null, kind: 'fixed' })).toBeNull();
    expect(relatedIndexKey('prj_a', {}, home)).toBeNull();
    // A carrier's pools and a VPN's exits are shared by strangers.
    expect(relatedIndexKey('prj_a', CHROME, { ...home, kind: 'mobile' })).toBeNull();
    expect(relatedIndexKey('prj_a', CHROME, { ...home, kind: 'anonymizer' })).toBeNull();
  });

  it('a visitor is on one list per network and distinct device key of its kept component sets', () => {
    const travelled = { ...CHROME, timezone: 'Asia/Tokyo' };
    const v = rec(
      'a',
      [CHROME, { ...CHROME, screen: '2560x1440' }, travelled, {}],
      [
        ['81.2.69', 1],
        ['2.125.160', 2],
      ],
    );
    const [home, away] = [deviceKey(CHROME), deviceKey(travelled)];
    expect(relatedKeysOf('prj_a', v)).toEqual([
      { key: `prj_a|${home}|81.2.69`, prefix: '81.2.69' },
      { key: `prj_a|${away}|81.2.69`, prefix: '81.2.69' },
      { key: `prj_a|${home}|2.125.160`, prefix: '2.125.160' },
      { key: `prj_a|${away}|2.125.160`, prefix: '2.125.160' },
    ]);
  });
});

describe('gpuModel', () => {
  it('names the GPU as Chromium and Firefox both do, without the PCI id', () => {
    expect(gpuModel(CHROME.webgl)).toBe('nvidia geforce rtx 3060');
    expect(gpuModel(EDGE.webgl)).toBe('nvidia geforce rtx 3060');
    expect(gpuModel(FIREFOX.webgl)).toBe('nvidia geforce gtx 980');
    expect(gpuModel('x|Apple M1, or similar')).toBe('apple m1');
    expect(gpuModel('Google Inc. (Intel)|ANGLE (Intel, Intel(R) UHD Graphics 620 (0x00005917) Direct3D11 vs_5_0 ps_5_0, D3D11)')).toBe(
      'intel(r) uhd graphics 620',
    );
    expect(gpuModel('Google Inc. (Apple)|ANGLE (Apple, ANGLE Metal Renderer: Apple M2, Unspecified Version)')).toBe('apple m2');
    expect(gpuModel('Google Inc. (Google)|ANGLE (Google, Vulkan 1.3.0 (SwiftShader Device (Subzero)), SwiftShader driver)')).toBe(
      'vulkan 1.3.0 (swiftshader device (subzero))',
    );
    expect(gpuModel('x|ANGLE (Google, Vulkan 1.3.0 (SwiftShader Device (Subzero) (0x0000C0DE)), SwiftShader driver)')).toBe(
      'vulkan 1.3.0 (swiftshader device (subzero))',
    );
    expect(gpuModel('x|ANGLE (Intel, Mesa Intel(R) Xe Graphics (TGL GT2))')).toBe('mesa intel(r) xe graphics (tgl gt2)');
    expect(gpuModel('x|ANGLE (Intel, Intel(R) HD Graphics 530 OpenGL 4.6)')).toBe('intel(r) hd graphics 530');
    expect(gpuModel('Intel Inc.|Intel Iris OpenGL Engine')).toBe('intel iris opengl engine');
    expect(gpuModel('ARM|Mali-G78')).toBe('mali-g78');
  });

  it('takes the whole name where it is not an ANGLE string, trimmed', () => {
    expect(gpuModel('x|Not ANGLE (NVIDIA, GeForce)')).toBe('not angle (nvidia, geforce)');
    expect(gpuModel('x| Mali-G78 ')).toBe('mali-g78');
    expect(gpuModel('x|Not an Apple GPU')).toBe('not an apple gpu');
    expect(gpuModel('x|Apple GPU Family 9')).toBe('apple gpu family 9');
  });

  it("says nothing of Safari's masked GPU or a missing one", () => {
    expect(gpuModel('Apple Inc.|Apple GPU')).toBeNull();
    expect(gpuModel(undefined)).toBeNull();
    expect(gpuModel('')).toBeNull();
  });
});

describe('gpuMaker', () => {
  it('names the maker of a GPU however an engine names the GPU', () => {
    const makers = {
      nvidia: ['x|ANGLE (NVIDIA, NVIDIA GeForce RTX 3060 Direct3D11)', 'x|GeForce GTX 980, or similar', 'x|Quadro P2000'],
      intel: ['x|ANGLE (Intel, Intel(R) UHD Graphics 620 Direct3D11)', 'x|Mesa Intel(R) Xe Graphics'],
      amd: ['x|ANGLE (AMD, AMD Radeon RX 6600 Direct3D11)', 'x|Radeon R9 200 Series, or similar', 'x|ATI Radeon HD 5770'],
      apple: ['x|Apple M1, or similar', 'x|ANGLE (Apple, ANGLE Metal Renderer: Apple M2, Unspecified Version)'],
      qualcomm: ['x|Adreno (TM) 740'],
      arm: ['x|Mali-G78'],
      imagination: ['x|PowerVR Rogue GE8320'],
    };
    for (const [maker, names] of Object.entries(makers)) for (const n of names) expect(gpuMaker(n), n).toBe(maker);
    expect(gpuMaker('x|llvmpipe (LLVM 15.0.6, 256 bits)')).toBeNull();
    expect(gpuMaker('Apple Inc.|Apple GPU')).toBeNull();
    expect(gpuMaker(undefined)).toBeNull();
  });
});

describe('pairEvidence', () => {
  it('across engines: the GPU by its maker where Firefox names a family, the screen and the language list weigh less, fonts by containment', () => {
    const cross = pairEvidence(rec('a', [CHROME]), rec('b', [FIREFOX]));
    close(cross.hardware, ln(1.5) + ln(3) + ln(1.5) + ln(1) + ln(1.3));
    close(cross.os_rendering, ln(4) + ln(1.3));
    const other = (change: Components) => pairEvidence(rec('a', [CHROME]), rec('b', [{ ...FIREFOX, ...change }]));
    close(other({ webgl: 'Mozilla|ANGLE (AMD, Radeon R9 200 Series Direct3D11 vs_5_0 ps_5_0), or similar' }).hardware - cross.hardware, ln(0.1) - ln(1.5));
    close(other({ screen: '1536x864' }).hardware - cross.hardware, ln(0.4) - ln(3));
    // A core count that differs tells machines apart, in any engine; one that agrees says nothing.
    close(other({ hardware: '[10,null,255]' }).hardware - cross.hardware, ln(0.1));
    close(other({ hardware: undefined }).hardware, cross.hardware);
    // Not from Safari on a Mac (8 whatever the chip), nor from a count that varies (Brave, extensions).
    const safariMac: Components = { ...CHROME, browser: 'Safari|Mac OS', hardware: '[8,null,255]' };
    const chromeMac: Components = { ...CHROME, browser: 'Chrome|Mac OS', hardware: '[12,16,255]' };
    close(
      pairEvidence(rec('a', [chromeMac]), rec('b', [safariMac])).hardware,
      pairEvidence(rec('a', [chromeMac]), rec('b', [{ ...safariMac, hardware: '[12,null,255]' }])).hardware,
    );
    const brave = rec('b', [
      { ...EDGE, hardware: '[4,8,255]' },
      { ...EDGE, hardware: '[6,8,255]' },
    ]);
    close(pairEvidence(rec('a', [CHROME]), brave).hardware, pairEvidence(rec('a', [CHROME]), rec('b', [EDGE])).hardware);
    close(pairEvidence(brave, rec('a', [CHROME])).hardware, pairEvidence(rec('b', [EDGE]), rec('a', [CHROME])).hardware);
    // The first language is the OS's; the rest is each browser's own.
    close(other({ languages: 'en-US' }).os_rendering, cross.os_rendering);
    close(other({ languages: 'de-DE,en-US,en' }).os_rendering - cross.os_rendering, ln(0.8) - ln(1.3));
    // Firefox may not see every font the OS has: the shorter list inside the longer counts as the same.
    close(other({ fonts: 'Arial,Calibri' }).os_rendering, cross.os_rendering);
    close(other({ fonts: 'Arial,Calibri,Cambria,Zapfino' }).os_rendering - cross.os_rendering, ln(0.1) - ln(4));
    close(other({ fonts: 'Arial,Calibri,Cambria,Consolas,A,B,C,D,E' }).os_rendering, cross.os_rendering);
    // A reduced name on either side: the maker decides, whichever side it is on.
    close(pairEvidence(rec('a', [FIREFOX]), rec('b', [CHROME])).hardware, cross.hardware);
    // Two Firefoxes name the same family: the maker still.
    close(pairEvidence(rec('a', [FIREFOX]), rec('b', [FIREFOX])).hardware, ln(1.5) + ln(3) + ln(1.5) + ln(1) + ln(1.3));
    // Safari on a Mac and Chrome on it: different engines, the GPU masked on one side.
    const mac: Components = {
      ...CHROME,
      browser: 'Chrome|Mac OS',
      webgl: 'Google Inc. (Apple)|ANGLE (Apple, ANGLE Metal Renderer: Apple M2, Unspecified Version)',
    };
    const safari: Components = { ...mac, browser: 'Safari|Mac OS', webgl: 'Apple Inc.|Apple GPU', screen: '1440x900' };
    close(pairEvidence(rec('a', [mac]), rec('b', [safari])).hardware, ln(0.4) + ln(1.5) + ln(1) + ln(1.3));
    // A side whose browser is unknown is taken for the same engine (the stricter screen rule).
    const { browser: _, ...unknown } = FIREFOX;
    close(
      pairEvidence(rec('a', [CHROME]), rec('b', [{ ...unknown, screen: '1536x864' }])).hardware,
      pairEvidence(rec('a', [CHROME]), rec('b', [{ ...FIREFOX, screen: '1536x864' }])).hardware - ln(0.4) + ln(0.15),
    );
    close(
      pairEvidence(rec('b', [{ ...unknown, screen: '1536x864' }]), rec('a', [CHROME])).hardware,
      pairEvidence(rec('b', [{ ...FIREFOX, screen: '1536x864' }]), rec('a', [CHROME])).hardware - ln(0.4) + ln(0.15),
    );
    // Firefox's family name in any of a visitor's sets: the maker decides.
    const twoSets = rec('b', [EDGE, FIREFOX]);
    close(
      pairEvidence(rec('a', [CHROME]), twoSets).hardware - pairEvidence(rec('a', [CHROME]), rec('b', [EDGE, { ...FIREFOX, webgl: EDGE.webgl }])).hardware,
      ln(1.5) - ln(5),
    );
    // Safari on a Mac in any set: its count is not believed.
    const mixed = rec('b', [
      { ...EDGE, hardware: '[4,8,255]' },
      { ...EDGE, browser: 'Safari|Mac OS', hardware: '[4,null,255]' },
    ]);
    close(pairEvidence(rec('a', [CHROME]), mixed).hardware, pairEvidence(rec('a', [CHROME]), rec('b', [EDGE, { ...EDGE, browser: 'Safari|Mac OS' }])).hardware);
    // Every browser on iOS is WebKit: one engine.
    const iosChrome: Components = { ...CHROME, browser: 'Chrome|iOS', screen: '390x844' };
    const iosSafari: Components = { ...iosChrome, browser: 'Mobile Safari|iOS', screen: '430x932' };
    close(
      pairEvidence(rec('a', [iosChrome]), rec('b', [iosSafari])).hardware - pairEvidence(rec('a', [iosChrome]), rec('b', [iosChrome])).hardware,
      ln(0.15) - ln(3),
    );
  });

  const ln = Math.log;
  const close = (x: number, y: number) => expect(x).toBeCloseTo(y, 10);
  const base = pairEvidence(rec('a', [CHROME]), rec('b', [EDGE]));

  it('the same machine in two browsers of one engine: every fact agrees', () => {
    close(base.hardware, ln(5) + ln(3) + ln(1.5) + ln(1) + ln(1.3));
    close(base.os_rendering, ln(4) + ln(1.3));
  });

  it.each([
    ['GPU', { webgl: 'x|ANGLE (AMD, AMD Radeon RX 6600 Direct3D11 vs_5_0 ps_5_0, D3D11)' }, 'hardware', ln(0.03) - ln(5)],
    ['screen', { screen: '1366x768' }, 'hardware', ln(0.15) - ln(3)],
    ['core count', { hardware: '[4,8,255]' }, 'hardware', ln(0.1)],
    ['colour', { color: '[30,"p3"]' }, 'hardware', ln(0.3) - ln(1.5)],
    ['touch', { touch: '{"maxTouchPoints":10}' }, 'hardware', ln(0.1) - ln(1)],
    ['audio rate', { audio: 'f1|44100' }, 'hardware', ln(0.5) - ln(1.3)],
    ['languages', { languages: 'de-DE,de' }, 'os_rendering', ln(0.8) - ln(1.3)],
    ['fonts, nearly', { fonts: 'Arial,Calibri,Cambria,Consolas,Corbel' }, 'os_rendering', ln(1.5) - ln(4)],
    ['fonts', { fonts: 'Arial,Helvetica' }, 'os_rendering', ln(0.1) - ln(4)],
  ] as const)('a different %s counts against', (_, change, family, delta) => {
    const e = pairEvidence(rec('a', [CHROME]), rec('b', [{ ...EDGE, ...change }]));
    close(e[family] - base[family], delta);
    const other = family === 'hardware' ? 'os_rendering' : 'hardware';
    close(e[other], base[other]);
  });

  it('a fact only one side collected says nothing; any kept set may agree (docked and undocked)', () => {
    const { screen: _, webgl: __, ...bare } = EDGE;
    const e = pairEvidence(rec('a', [CHROME]), rec('b', [bare]));
    close(e.hardware, ln(1.5) + ln(1) + ln(1.3));
    const docked = pairEvidence(rec('a', [{ ...CHROME, screen: '2560x1440' }, CHROME]), rec('b', [{ ...EDGE, screen: '1920x1080' }]));
    close(docked.hardware, base.hardware);
    // Fonts compare the newest sets only.
    close(pairEvidence(rec('a', [{ ...CHROME, fonts: undefined }]), rec('b', [EDGE])).os_rendering, ln(1.3));
    close(pairEvidence(rec('a', [{ ...CHROME, fonts: 'Zapfino' }, CHROME]), rec('b', [EDGE])).os_rendering, ln(0.1) + ln(1.3));
    close(pairEvidence(rec('a', [CHROME]), rec('b', [{ ...EDGE, fonts: undefined }])).os_rendering, ln(1.3));
    // The fonts' metrics: the same in every browser of a machine says nothing look-alikes do not share; a difference
    // in every kept set tells two machines apart; one side without them says nothing.
    const m = (c: Components, fontMetrics?: string) => ({ ...c, fontMetrics });
    close(
      pairEvidence(rec('a', [m(CHROME, 'f1')]), rec('b', [m(FIREFOX, 'f1')])).os_rendering,
      pairEvidence(rec('a', [CHROME]), rec('b', [FIREFOX])).os_rendering,
    );
    close(pairEvidence(rec('a', [m(CHROME, 'f1')]), rec('b', [m(EDGE, 'f2')])).os_rendering, base.os_rendering + ln(0.2));
    // Firefox against another engine may hide fonts (private windows, strict tracking protection): a difference says nothing.
    const crossing = pairEvidence(rec('a', [CHROME]), rec('b', [FIREFOX])).os_rendering;
    close(pairEvidence(rec('a', [m(CHROME, 'f1')]), rec('b', [m(FIREFOX, 'f2')])).os_rendering, crossing);
    close(
      pairEvidence(rec('a', [m(FIREFOX, 'f1')]), rec('b', [m(CHROME, 'f2')])).os_rendering,
      pairEvidence(rec('a', [FIREFOX]), rec('b', [CHROME])).os_rendering,
    );
    // Two Firefox profiles of one machine measure alike: there it counts.
    close(
      pairEvidence(rec('a', [m(FIREFOX, 'f1')]), rec('b', [m(FIREFOX, 'f2')])).os_rendering,
      pairEvidence(rec('a', [FIREFOX]), rec('b', [FIREFOX])).os_rendering + ln(0.2),
    );
    close(pairEvidence(rec('a', [m(CHROME, 'f1'), m(CHROME, 'f0')]), rec('b', [m(EDGE, 'f0')])).os_rendering, base.os_rendering);
    close(pairEvidence(rec('a', [m(CHROME, 'f1')]), rec('b', [EDGE])).os_rendering, base.os_rendering);
    // A visitor with no component set kept says nothing.
    expect(pairEvidence(rec('a', []), rec('b', [EDGE]))).toEqual({ hardware: 0, os_rendering: 0 });
    expect(pairEvidence(rec('a', [CHROME]), rec('b', []))).toEqual({ hardware: 0, os_rendering: 0 });
  });
});

describe('relatedOf', () => {
  const a = rec('a', [CHROME], [['81.2.69', 1000]]);
  const b = rec('b', [EDGE], [['81.2.69', 900]]);
  const odds = (e: { hardware: number; os_rendering: number }, net = 0) => RELATED_PRIOR_ODDS * Math.exp(e.hardware + e.os_rendering + net);
  const p = (o: number) => Math.round((o / (1 + o)) * 1000) / 1000;

  it("relates the machine's other browser on a list both are on, with the posterior, the family and when they were last together", () => {
    const r = resolver([a, b]);
    expect(relatedOf(a, [list(['b', 'a'])], r)).toEqual([
      { visitorId: 'b', probability: p(odds(pairEvidence(a, b))), evidence: 'hardware', lastSeenTogetherAt: 900 },
    ]);
    expect(relatedOf(b, [list(['b', 'a'])], r).map((x) => x.visitorId)).toEqual(['a']);
  });

  it('answers nothing from a list the visitor is not on (another project, or pushed out of a full list)', () => {
    expect(relatedOf(a, [list(['b', 'c'])], resolver([a, b]))).toEqual([]);
  });

  it('skips deleted visitors and follows merges, itself included', () => {
    const merged = rec('m', [EDGE], [['81.2.69', 500]], { mergedInto: 'b' });
    const alias = rec('s', [CHROME], [], { mergedInto: 'a' });
    expect(relatedOf(a, [list(['gone', 'm', 's'])], resolver([a, b, merged, alias])).map((x) => x.visitorId)).toEqual(['b']);
  });

  it('drops what falls under the threshold, and keeps what reaches it', () => {
    // Evidence against (another GPU and screen) sinks a candidate.
    const c = rec('c', [{ ...EDGE, webgl: 'x|ANGLE (AMD, AMD Radeon RX 6600 Direct3D11)', screen: '1366x768' }]);
    expect(relatedOf(a, [list(['a', 'c'])], resolver([a, c]))).toEqual([]);
    // Agreeing on hardware only, fonts different: below.
    const d = rec('d', [{ ...EDGE, fonts: 'Zapfino' }]);
    const pd = p(odds(pairEvidence(a, d)));
    expect(pd).toBeLessThan(RELATED_THRESHOLD);
    expect(relatedOf(a, [list(['a', 'd'])], resolver([a, d]))).toEqual([]);
    expect(p(odds(pairEvidence(a, b)))).toBeGreaterThanOrEqual(RELATED_THRESHOLD);
  });

  it('a further shared network counts (at most two), and the family says so when it weighs most', () => {
    const weak = { ...EDGE, webgl: undefined, screen: undefined, color: undefined, touch: undefined, audio: undefined, languages: 'de' };
    const x = rec(
      'x',
      [CHROME],
      [
        ['1.1.1', 10],
        ['2.2.2', 20],
        ['3.3.3', 30],
        ['4.4.4', 40],
      ],
    );
    const y = rec(
      'y',
      [weak],
      [
        ['1.1.1', 5],
        ['2.2.2', 25],
        ['3.3.3', 35],
        ['4.4.4', 45],
      ],
    );
    const lists = ['1.1.1', '2.2.2', '3.3.3', '4.4.4'].map((prefix) => list(['x', 'y'], 2, prefix));
    const [rel] = relatedOf(x, lists, resolver([x, y]));
    expect(rel).toEqual({
      visitorId: 'y',
      probability: p(odds(pairEvidence(x, y), 2 * Math.log(4))),
      evidence: 'network',
      // The latest network both used: the earlier of their last visits from it.
      lastSeenTogetherAt: 40,
    });
    // Two networks in common count once, and that is not enough here.
    expect(p(odds(pairEvidence(x, y), Math.log(4)))).toBeLessThan(RELATED_THRESHOLD);
    expect(
      relatedOf(
        x,
        lists.slice(0, 2),
        resolver([
          x,
          rec(
            'y',
            [weak],
            [
              ['1.1.1', 5],
              ['2.2.2', 25],
            ],
          ),
        ]),
      ),
    ).toEqual([]);
  });

  it('counts only the networks both used; a relative whose networks moved on is last together at 0 on that list', () => {
    const x = rec('x', [CHROME], [['1.1.1', 10]]);
    const y = rec(
      'y',
      [EDGE],
      [
        ['1.1.1', 5],
        ['7.7.7', 50],
        ['8.8.8', 60],
      ],
    );
    expect(relatedOf(x, [list(['x', 'y'], 2, '1.1.1')], resolver([x, y]))).toEqual([
      { visitorId: 'y', probability: p(odds(pairEvidence(x, y))), evidence: 'hardware', lastSeenTogetherAt: 5 },
    ]);
    const gone = rec('g', [EDGE], [['7.7.7', 50]]);
    expect(relatedOf(x, [list(['x', 'g'], 2, '1.1.1')], resolver([x, gone]))).toEqual([
      { visitorId: 'g', probability: p(odds(pairEvidence(x, gone))), evidence: 'hardware', lastSeenTogetherAt: 0 },
    ]);
  });

  it('the OS rendering family when it weighs most', () => {
    // Screen (3) and audio (1.3) against fonts (4) and languages (1.3).
    const fontsOnly = rec('f', [{ ...EDGE, webgl: undefined, color: undefined, touch: undefined, hardware: undefined }]);
    const [rel] = relatedOf(a, [list(['a', 'f'])], resolver([a, fontsOnly]));
    expect(rel).toMatchObject({ visitorId: 'f', evidence: 'os_rendering' });
  });

  it('answers a relative exactly at the threshold', () => {
    // GPU (5) and fonts (4) alone: odds 0.2 × 20 = 4, a probability of 0.8.
    const edge = rec('e', [{ ...EDGE, hardware: undefined, screen: undefined, color: undefined, touch: undefined, audio: undefined, languages: undefined }]);
    expect(relatedOf(a, [list(['a', 'e'])], resolver([a, edge]))).toEqual([
      { visitorId: 'e', probability: RELATED_THRESHOLD, evidence: 'hardware', lastSeenTogetherAt: 1000 },
    ]);
  });

  it('visitors that joined a list beyond those read count like those read', () => {
    // 6 joined, 2 read (itself and b): 4 unread, as alike as b is, so b has 2 look-alikes: odds / 2².
    expect(relatedOf(a, [list(['a', 'b'], 6)], resolver([a, b]))[0]?.probability).toBe(p(odds(pairEvidence(a, b)) / 4));
    const strong = rec(
      's',
      [{ ...EDGE, languages: 'en-US,en' }],
      [
        ['81.2.69', 900],
        ['5.5.5', 9],
        ['6.6.6', 9],
      ],
    );
    const self = rec(
      'a',
      [CHROME],
      [
        ['81.2.69', 1000],
        ['5.5.5', 9],
        ['6.6.6', 9],
      ],
    );
    const o = odds(pairEvidence(self, strong), 2 * Math.log(4));
    expect(relatedOf(self, [list(['a', 's'], 6)], resolver([self, strong]))[0]?.probability).toBe(p(o / 4));
    // 3 read (itself, s and a twin of s), 6 joined: scale 2, s has 1 × 2 + 1 = 3 look-alikes.
    const twin = rec(
      't',
      [{ ...EDGE, languages: 'en-US,en' }],
      [
        ['81.2.69', 800],
        ['5.5.5', 9],
        ['6.6.6', 9],
      ],
    );
    expect(relatedOf(self, [list(['a', 's', 't'], 6)], resolver([self, strong, twin]))[0]?.probability).toBe(p(o / 9));
  });

  it('look-alikes as likely on the list divide the odds twice over: a fleet of one image is not related', () => {
    const twins = ['b', 'c', 'd'].map((id) => rec(id, [EDGE]));
    const r = resolver([a, ...twins]);
    // Two alike: a machine's browsers, related.
    const two = relatedOf(a, [list(['a', 'b', 'c'])], r);
    expect(two.map((x) => x.probability)).toEqual([p(odds(pairEvidence(a, b)) / 1), p(odds(pairEvidence(a, b)) / 1)]);
    // Three alike: each divided by 2².
    expect(relatedOf(a, [list(['a', 'b', 'c', 'd'])], r).every((x) => x.probability === p(odds(pairEvidence(a, b)) / 4))).toBe(true);
    // A full list of 8 out of 40 that joined: the unread 32 are counted like the 7 read.
    const many = Array.from({ length: 7 }, (_, i) => rec(`f${i}`, [EDGE]));
    expect(relatedOf(a, [list(['a', ...many.map((m) => m.id)], 40)], resolver([a, ...many]))).toEqual([]);
    // An unlike visitor on the list does not count as a look-alike.
    const unlike = rec('u', [{ ...EDGE, webgl: 'x|ANGLE (AMD, AMD Radeon RX 6600 Direct3D11)', screen: '1366x768', fonts: 'Zapfino' }]);
    expect(relatedOf(a, [list(['a', 'b', 'u'])], resolver([a, b, unlike])).map((x) => [x.visitorId, x.probability])).toEqual([
      ['b', p(odds(pairEvidence(a, b)))],
    ]);
  });

  it('keeps each relative once, at its best list, with its latest time together; newest together first, then by id', () => {
    const c = rec(
      'c',
      [EDGE],
      [
        ['81.2.69', 950],
        ['9.9.9', 2000],
      ],
    );
    const self = rec(
      'a',
      [CHROME],
      [
        ['81.2.69', 1000],
        ['9.9.9', 3000],
      ],
    );
    const crowd = Array.from({ length: 3 }, (_, i) => rec(`z${i}`, [EDGE], [['9.9.9', 1]]));
    const r = resolver([self, b, c, ...crowd]);
    const out = relatedOf(self, [list(['a', 'b', 'c']), list(['a', 'c', ...crowd.map((z) => z.id)], 12, '9.9.9')], r);
    expect(out.map((x) => x.visitorId)).toEqual(['c', 'b']);
    const shared = pairEvidence(self, c);
    expect(out[0]).toMatchObject({ lastSeenTogetherAt: 2000, probability: p(odds(shared, Math.log(4))) });
    // A better list read later wins over a worse one read first.
    const reversed = relatedOf(self, [list(['a', 'c', ...crowd.map((z) => z.id)], 12, '9.9.9'), list(['a', 'b', 'c'])], r);
    expect(reversed).toEqual(out);
    // Ties in time go by id.
    const ties = ['t2', 't0', 't1'].map((id) => rec(id, [EDGE], [['81.2.69', 1000]]));
    expect(relatedOf(a, [list(['a', 't2', 't0', 't1'])], resolver([a, ...ties])).map((x) => x.visitorId)).toEqual(['t0', 't1', 't2']);
  });
});
