// A seeded synthetic population of devices for the accuracy benchmark. Signals
// are correlated the way they are in real traffic: the OS decides the GPU
// strings, fonts, screen sizes and platform; the country decides time zones
// and languages; and the rendering hashes (canvas, audio, math, WebGL caps)
// come from the device's hardware+software *stack*, so two laptops of one
// model with one OS image render identical canvases. Fleets of identical
// corporate laptops and phones are included on purpose: only the device token
// tells their members apart.
import type { SignalValues, SpecSignalValues } from '../../contract/signals.js';
import { rng, type Rng } from './random.js';
import type { Siblings, World } from './world.js';

export { rng, type Rng };

export const pick = <T>(r: Rng, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;

function weighted<T>(r: Rng, xs: readonly (readonly [T, number])[]): T {
  let x = r() * xs.reduce((s, [, w]) => s + w, 0);
  for (const [v, w] of xs) if ((x -= w) < 0) return v;
  return xs[xs.length - 1]![0];
}

/** Exponential variate with the given mean. */
export const expo = (r: Rng, mean: number) => -Math.log(1 - r()) * mean;

function cyrb53(s: string, seed: number): number {
  let h1 = 0xdeadbeef ^ seed;
  let h2 = 0x41c6ce57 ^ seed;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}

/** Deterministic hex digest of its parts: the stand-in for a rendered hash. */
export const digest = (...parts: (string | number | boolean)[]) => {
  const s = parts.join('|');
  return cyrb53(s, 1).toString(16).padStart(14, '0') + cyrb53(s, 2).toString(16).padStart(14, '0');
};

/** Deterministic uniform number in [0, 1) from its parts. */
const unit = (...parts: (string | number)[]) => cyrb53(parts.join('|'), 3) / 2 ** 53;

export const DAY = 86_400_000;
/** Day 0 of the simulated window. */
export const START = Date.UTC(2025, 6, 1);

// ---- Browser release calendar (days relative to START) --------------------

export type Family = 'Chrome' | 'Edge' | 'Brave' | 'Firefox' | 'Safari' | 'Samsung';
export type Os = 'Windows' | 'macOS' | 'Linux' | 'Android' | 'iOS';
type Train = 'chromium' | 'firefox' | 'samsung' | 'apple';

const RELEASES: Record<Train, readonly (readonly [number, number])[]> = {
  chromium: [
    [126, -385],
    [127, -343],
    [128, -315],
    [129, -287],
    [130, -259],
    [131, -231],
    [132, -168],
    [133, -147],
    [134, -119],
    [135, -91],
    [136, -63],
    [137, -35],
    [138, -7],
    [139, 35],
    [140, 63],
    [141, 91],
    [142, 119],
  ],
  firefox: [
    [128, -357],
    [129, -329],
    [130, -301],
    [131, -273],
    [132, -245],
    [133, -217],
    [134, -175],
    [135, -147],
    [136, -119],
    [137, -91],
    [138, -63],
    [139, -35],
    [140, -7],
    [141, 21],
    [142, 49],
    [143, 77],
    [144, 105],
  ],
  samsung: [
    [25, -420],
    [26, -350],
    [27, -230],
    [28, -80],
    [29, 80],
  ],
  // Safari and iOS: one major a year (Safari 26 followed 18 on 15 Sep 2025).
  apple: [
    [16, -1018],
    [17, -652],
    [18, -288],
    [26, 76],
  ],
};

const TRAIN: Record<Family, Train> = { Chrome: 'chromium', Edge: 'chromium', Brave: 'chromium', Firefox: 'firefox', Safari: 'apple', Samsung: 'samsung' };

/** The newest major of a release train out on `day`. */
export function majorOn(train: Train, day: number): number {
  const rs = RELEASES[train];
  let m = rs[0]![0];
  for (const [major, d] of rs) if (d <= day) m = major;
  return m;
}

export const trainOf = (p: Profile): Train => (p.os === 'iOS' && p.family === 'Chrome' ? 'chromium' : TRAIN[p.family]);

/**
 * Browser updates sometimes change rendering: a new Skia/ANGLE, a new libm,
 * a new audio resampler. Which majors did is fixed per engine (all devices
 * updating to that major see the same change); yearly Apple releases nearly
 * always do.
 */
const CHANGE_RATE = {
  canvas: { monthly: 0.25, yearly: 0.9 },
  webglCaps: { monthly: 0.2, yearly: 0.8 },
  math: { monthly: 0.1, yearly: 0.5 },
  audio: { monthly: 0.05, yearly: 0.5 },
} as const;
type Rendering = keyof typeof CHANGE_RATE;

/** The last major (≤ `major`) at which this engine's `what` output changed. */
function renderEpoch(engineKey: string, yearly: boolean, what: Rendering, major: number): number {
  const key = `${engineKey}|${yearly}|${what}|${major}`;
  let epoch = epochs.get(key);
  if (epoch === undefined) {
    const p = CHANGE_RATE[what][yearly ? 'yearly' : 'monthly'];
    epoch = major;
    while (epoch > major - 60 && unit(engineKey, what, epoch) >= p) epoch--;
    epochs.set(key, epoch);
  }
  return epoch;
}
const epochs = new Map<string, number>();

// ---- Geography -------------------------------------------------------------

interface Country {
  code: string;
  weight: number;
  /** IANA zone, standard offset (minutes east of UTC), weight. */
  zones: readonly (readonly [string, number, number])[];
  langs: readonly (readonly [string[], number])[];
  /** Share of mobiles that are iPhones, of desktops that are Macs. */
  ios: number;
  mac: number;
  cjk?: boolean;
}

const COUNTRIES: readonly Country[] = [
  {
    code: 'US',
    weight: 28,
    ios: 0.57,
    mac: 0.3,
    zones: [
      ['America/New_York', -300, 45],
      ['America/Chicago', -360, 28],
      ['America/Denver', -420, 6],
      ['America/Phoenix', -420, 3],
      ['America/Los_Angeles', -480, 18],
    ],
    langs: [
      [['en-US'], 45],
      [['en-US', 'en'], 40],
      [['en-US', 'es-US', 'es'], 7],
      [['es-US', 'es', 'en'], 5],
      [['en-US', 'zh-CN'], 3],
    ],
  },
  {
    code: 'GB',
    weight: 5,
    ios: 0.5,
    mac: 0.25,
    zones: [['Europe/London', 0, 1]],
    langs: [
      [['en-GB', 'en-US', 'en'], 50],
      [['en-GB', 'en'], 35],
      [['en-GB'], 15],
    ],
  },
  {
    code: 'DE',
    weight: 6,
    ios: 0.35,
    mac: 0.15,
    zones: [['Europe/Berlin', 60, 1]],
    langs: [
      [['de-DE', 'de', 'en-US', 'en'], 50],
      [['de-DE', 'de'], 30],
      [['de'], 10],
      [['de-DE', 'en-US'], 10],
    ],
  },
  {
    code: 'FR',
    weight: 5,
    ios: 0.33,
    mac: 0.15,
    zones: [['Europe/Paris', 60, 1]],
    langs: [
      [['fr-FR', 'fr', 'en-US', 'en'], 55],
      [['fr-FR', 'fr'], 30],
      [['fr'], 15],
    ],
  },
  {
    code: 'ES',
    weight: 3,
    ios: 0.2,
    mac: 0.1,
    zones: [
      ['Europe/Madrid', 60, 9],
      ['Atlantic/Canary', 0, 1],
    ],
    langs: [
      [['es-ES', 'es'], 60],
      [['es-ES', 'es', 'en-US', 'en'], 30],
      [['ca-ES', 'es'], 10],
    ],
  },
  {
    code: 'IT',
    weight: 3,
    ios: 0.25,
    mac: 0.1,
    zones: [['Europe/Rome', 60, 1]],
    langs: [
      [['it-IT', 'it', 'en-US', 'en'], 55],
      [['it-IT', 'it'], 45],
    ],
  },
  {
    code: 'NL',
    weight: 2,
    ios: 0.4,
    mac: 0.15,
    zones: [['Europe/Amsterdam', 60, 1]],
    langs: [
      [['nl-NL', 'nl', 'en-US', 'en'], 60],
      [['nl-NL', 'nl'], 25],
      [['en-US', 'en', 'nl'], 15],
    ],
  },
  {
    code: 'PL',
    weight: 2,
    ios: 0.2,
    mac: 0.08,
    zones: [['Europe/Warsaw', 60, 1]],
    langs: [
      [['pl-PL', 'pl', 'en-US', 'en'], 60],
      [['pl'], 40],
    ],
  },
  {
    code: 'BR',
    weight: 6,
    ios: 0.15,
    mac: 0.06,
    zones: [
      ['America/Sao_Paulo', -180, 85],
      ['America/Manaus', -240, 10],
      ['America/Fortaleza', -180, 5],
    ],
    langs: [
      [['pt-BR', 'pt', 'en-US', 'en'], 60],
      [['pt-BR'], 40],
    ],
  },
  {
    code: 'MX',
    weight: 3,
    ios: 0.2,
    mac: 0.08,
    zones: [
      ['America/Mexico_City', -360, 85],
      ['America/Tijuana', -480, 15],
    ],
    langs: [
      [['es-MX', 'es'], 55],
      [['es-419', 'es'], 30],
      [['es-MX', 'es', 'en-US', 'en'], 15],
    ],
  },
  {
    code: 'CA',
    weight: 3,
    ios: 0.55,
    mac: 0.25,
    zones: [
      ['America/Toronto', -300, 60],
      ['America/Vancouver', -480, 25],
      ['America/Edmonton', -420, 15],
    ],
    langs: [
      [['en-CA', 'en-US', 'en'], 60],
      [['en-US', 'en'], 20],
      [['fr-CA', 'fr', 'en-CA', 'en'], 20],
    ],
  },
  {
    code: 'IN',
    weight: 7,
    ios: 0.08,
    mac: 0.06,
    zones: [
      ['Asia/Kolkata', 330, 9],
      ['Asia/Calcutta', 330, 1],
    ],
    langs: [
      [['en-IN', 'en-GB', 'en-US', 'en'], 45],
      [['en-US', 'en'], 35],
      [['hi-IN', 'en-IN', 'en'], 20],
    ],
  },
  {
    code: 'JP',
    weight: 4,
    ios: 0.65,
    mac: 0.2,
    cjk: true,
    zones: [['Asia/Tokyo', 540, 1]],
    langs: [
      [['ja', 'en-US', 'en'], 45],
      [['ja-JP', 'ja'], 35],
      [['ja'], 20],
    ],
  },
  {
    code: 'KR',
    weight: 2,
    ios: 0.3,
    mac: 0.1,
    cjk: true,
    zones: [['Asia/Seoul', 540, 1]],
    langs: [
      [['ko-KR', 'ko', 'en-US', 'en'], 70],
      [['ko'], 30],
    ],
  },
  {
    code: 'CN',
    weight: 1,
    ios: 0.25,
    mac: 0.08,
    cjk: true,
    zones: [['Asia/Shanghai', 480, 1]],
    langs: [
      [['zh-CN', 'zh'], 80],
      [['zh-CN', 'zh', 'en'], 20],
    ],
  },
  {
    code: 'TW',
    weight: 1,
    ios: 0.4,
    mac: 0.1,
    cjk: true,
    zones: [['Asia/Taipei', 480, 1]],
    langs: [
      [['zh-TW', 'zh', 'en-US', 'en'], 80],
      [['zh-TW'], 20],
    ],
  },
  {
    code: 'ID',
    weight: 3,
    ios: 0.1,
    mac: 0.05,
    zones: [
      ['Asia/Jakarta', 420, 80],
      ['Asia/Makassar', 480, 20],
    ],
    langs: [
      [['id-ID', 'id', 'en-US', 'en'], 60],
      [['en-US', 'en'], 40],
    ],
  },
  {
    code: 'TR',
    weight: 2,
    ios: 0.15,
    mac: 0.05,
    zones: [['Europe/Istanbul', 180, 1]],
    langs: [
      [['tr-TR', 'tr', 'en-US', 'en'], 70],
      [['tr'], 30],
    ],
  },
  {
    code: 'RU',
    weight: 3,
    ios: 0.3,
    mac: 0.06,
    zones: [
      ['Europe/Moscow', 180, 75],
      ['Asia/Yekaterinburg', 300, 15],
      ['Asia/Novosibirsk', 420, 10],
    ],
    langs: [
      [['ru-RU', 'ru', 'en-US', 'en'], 70],
      [['ru'], 30],
    ],
  },
  {
    code: 'AU',
    weight: 2,
    ios: 0.55,
    mac: 0.25,
    zones: [
      ['Australia/Sydney', 600, 45],
      ['Australia/Melbourne', 600, 30],
      ['Australia/Brisbane', 600, 15],
      ['Australia/Perth', 480, 10],
    ],
    langs: [
      [['en-AU', 'en-GB', 'en-US', 'en'], 60],
      [['en-US', 'en'], 40],
    ],
  },
  {
    code: 'PH',
    weight: 2,
    ios: 0.15,
    mac: 0.05,
    zones: [['Asia/Manila', 480, 1]],
    langs: [
      [['en-US', 'en'], 70],
      [['en-PH', 'fil', 'en'], 30],
    ],
  },
  {
    code: 'VN',
    weight: 1,
    ios: 0.25,
    mac: 0.05,
    zones: [
      ['Asia/Ho_Chi_Minh', 420, 8],
      ['Asia/Saigon', 420, 2],
    ],
    langs: [
      [['vi-VN', 'vi', 'en-US', 'en'], 70],
      [['vi'], 30],
    ],
  },
];

export interface Zone {
  name: string;
  offset: number;
  country: string;
}

const zoneOf = (r: Rng, c: Country): Zone => {
  const [name, offset] = weighted(
    r,
    c.zones.map((z) => [z, z[2]] as const),
  );
  return { name, offset, country: c.code };
};

/** A zone in another country, for travel. */
export const foreignZone = (r: Rng, home: string): Zone => {
  const c = weighted(
    r,
    COUNTRIES.filter((x) => x.code !== home).map((x) => [x, x.weight] as const),
  );
  return zoneOf(r, c);
};

/** A language the user might add to their preferences. */
export const EXTRA_LANGUAGES = ['en', 'en-US', 'en-GB', 'es', 'fr', 'de', 'it', 'pt', 'ja', 'zh-CN', 'ru', 'nl', 'pl', 'ko', 'ar', 'uk'];

// ---- Fonts (FingerprintJS probe list, probe order) -------------------------

const PROBES = [
  'sans-serif-thin',
  'ARNO PRO',
  'Agency FB',
  'Arabic Typesetting',
  'Arial Unicode MS',
  'AvantGarde Bk BT',
  'BankGothic Md BT',
  'Batang',
  'Bitstream Vera Sans Mono',
  'Calibri',
  'Century',
  'Century Gothic',
  'Clarendon',
  'EUROSTILE',
  'Franklin Gothic',
  'Futura Bk BT',
  'Futura Md BT',
  'GOTHAM',
  'Gill Sans',
  'HELV',
  'Haettenschweiler',
  'Helvetica Neue',
  'Humanst521 BT',
  'Leelawadee',
  'Letter Gothic',
  'Levenim MT',
  'Lucida Bright',
  'Lucida Sans',
  'Menlo',
  'MS Mincho',
  'MS Outlook',
  'MS Reference Specialty',
  'MS UI Gothic',
  'MT Extra',
  'MYRIAD PRO',
  'Marlett',
  'Meiryo UI',
  'Microsoft Uighur',
  'Minion Pro',
  'Monotype Corsiva',
  'PMingLiU',
  'Pristina',
  'SCRIPTINA',
  'Segoe UI Light',
  'Serifa',
  'SimHei',
  'Small Fonts',
  'Staccato222 BT',
  'TRAJAN PRO',
  'Univers CE 55 Medium',
  'Vrinda',
  'ZWAdobeF',
];

const FONTS = {
  windows: [
    'Arabic Typesetting',
    'Calibri',
    'Franklin Gothic',
    'HELV',
    'Leelawadee',
    'MS UI Gothic',
    'Marlett',
    'Microsoft Uighur',
    'Segoe UI Light',
    'Small Fonts',
    'Vrinda',
  ],
  windowsCjk: ['Batang', 'MS Mincho', 'Meiryo UI', 'PMingLiU', 'SimHei'],
  office: [
    'Agency FB',
    'Arial Unicode MS',
    'Century',
    'Century Gothic',
    'Haettenschweiler',
    'Levenim MT',
    'Lucida Bright',
    'Lucida Sans',
    'MS Outlook',
    'MS Reference Specialty',
    'MT Extra',
    'Monotype Corsiva',
    'Pristina',
  ],
  macOffice: ['Calibri', 'Century Gothic', 'Franklin Gothic', 'Marlett', 'Monotype Corsiva', 'MS Reference Specialty'],
  adobe: ['ARNO PRO', 'Letter Gothic', 'MYRIAD PRO', 'Minion Pro', 'TRAJAN PRO', 'ZWAdobeF'],
  corel: ['AvantGarde Bk BT', 'BankGothic Md BT', 'Clarendon', 'Futura Bk BT', 'Futura Md BT', 'Humanst521 BT', 'Serifa', 'Staccato222 BT'],
  stray: ['EUROSTILE', 'GOTHAM', 'Gill Sans', 'SCRIPTINA', 'Univers CE 55 Medium', 'Bitstream Vera Sans Mono', 'Letter Gothic', 'Clarendon'],
  mac: ['Arial Unicode MS', 'Gill Sans', 'Helvetica Neue', 'Menlo'],
  linux: ['Bitstream Vera Sans Mono'],
  android: ['sans-serif-thin'],
  ios: ['Gill Sans', 'Helvetica Neue', 'Menlo'],
} as const;

const inProbeOrder = (fonts: Iterable<string>) => {
  const set = new Set(fonts);
  return PROBES.filter((f) => set.has(f));
};

// ---- Hardware ---------------------------------------------------------------

type Size = readonly [number, number];
type Frame = SignalValues['screenFrame'];

/** Windows GPUs: ANGLE vendor, name, PCI device id, weight, integrated? */
const WIN_GPUS: readonly (readonly [string, string, string, number, boolean])[] = [
  ['Intel', 'Intel(R) Iris(R) Xe Graphics', '0x00009A49', 16, true],
  ['Intel', 'Intel(R) UHD Graphics', '0x00009A78', 8, true],
  ['Intel', 'Intel(R) UHD Graphics 620', '0x00005917', 9, true],
  ['Intel', 'Intel(R) UHD Graphics 630', '0x00003E92', 5, true],
  ['Intel', 'Intel(R) HD Graphics 620', '0x00005916', 4, true],
  ['Intel', 'Intel(R) HD Graphics 520', '0x00001916', 3, true],
  ['Intel', 'Intel(R) UHD Graphics 600', '0x00003185', 2, true],
  ['Intel', 'Intel(R) Arc(TM) Graphics', '0x00007D55', 3, true],
  ['AMD', 'AMD Radeon(TM) Graphics', '0x00001638', 9, true],
  ['AMD', 'AMD Radeon(TM) Vega 8 Graphics', '0x000015D8', 2, true],
  ['AMD', 'AMD Radeon RX 580 2048SP', '0x00006FDF', 2, false],
  ['AMD', 'AMD Radeon RX 6600', '0x000073FF', 2, false],
  ['AMD', 'AMD Radeon RX 7600', '0x00007480', 1, false],
  ['NVIDIA', 'NVIDIA GeForce RTX 3060', '0x00002504', 5, false],
  ['NVIDIA', 'NVIDIA GeForce GTX 1650', '0x00001F99', 5, false],
  ['NVIDIA', 'NVIDIA GeForce RTX 4060', '0x00002882', 4, false],
  ['NVIDIA', 'NVIDIA GeForce GTX 1060 6GB', '0x00001C03', 3, false],
  ['NVIDIA', 'NVIDIA GeForce RTX 3050 Laptop GPU', '0x000025A2', 3, false],
  ['NVIDIA', 'NVIDIA GeForce RTX 2060', '0x00001F08', 2, false],
  ['NVIDIA', 'NVIDIA GeForce RTX 4070', '0x00002786', 2, false],
  ['NVIDIA', 'NVIDIA GeForce RTX 3070', '0x00002484', 2, false],
  ['NVIDIA', 'NVIDIA GeForce GTX 1050 Ti', '0x00001C8C', 2, false],
];

// Screen sizes in CSS px (larger side first); 1536x864 is a 1080p laptop at 125 %.
const WIN_LAPTOP_SCREENS: readonly (readonly [Size, number])[] = [
  [[1536, 864], 30],
  [[1920, 1080], 25],
  [[1366, 768], 15],
  [[1280, 720], 5],
  [[1280, 800], 5],
  [[1707, 1067], 4],
  [[1440, 900], 4],
  [[1600, 900], 5],
  [[1920, 1200], 4],
  [[1745, 1091], 3],
];
const WIN_DESKTOP_SCREENS: readonly (readonly [Size, number])[] = [
  [[1920, 1080], 55],
  [[2560, 1440], 20],
  [[1680, 1050], 3],
  [[1280, 1024], 3],
  [[3440, 1440], 4],
  [[1920, 1200], 5],
  [[3840, 2160], 3],
  [[2560, 1080], 2],
  [[1600, 900], 5],
];
const EXTERNAL_SCREENS: readonly (readonly [Size, number])[] = [
  [[1920, 1080], 50],
  [[2560, 1440], 30],
  [[1920, 1200], 8],
  [[3440, 1440], 6],
  [[1680, 1050], 6],
];
const LINUX_SCREENS: readonly (readonly [Size, number])[] = [
  [[1920, 1080], 50],
  [[2560, 1440], 15],
  [[1366, 768], 10],
  [[1920, 1200], 10],
  [[3840, 2160], 5],
  [[1600, 900], 10],
];

/** Mac GPUs: name, weight, Chrome's core count, Pro/Max chip, Apple Silicon. */
const MAC_CHIPS: readonly (readonly [string, number, number, boolean, boolean])[] = [
  ['Apple M1', 28, 8, false, true],
  ['Apple M2', 18, 8, false, true],
  ['Apple M3', 10, 8, false, true],
  ['Apple M4', 6, 10, false, true],
  ['Apple M1 Pro', 7, 10, true, true],
  ['Apple M2 Pro', 4, 12, true, true],
  ['Apple M3 Pro', 4, 12, true, true],
  ['Apple M1 Max', 2, 10, true, true],
  ['Apple M4 Pro', 2, 14, true, true],
  ['Intel(R) Iris(TM) Plus Graphics 655', 5, 8, false, false],
  ['Intel(R) UHD Graphics 630', 5, 12, false, false],
  ['Intel(R) Iris(TM) Plus Graphics', 3, 8, false, false],
  ['AMD Radeon Pro 5300M', 2, 12, true, false],
];

/** Linux GPUs: ANGLE vendor, renderer, Firefox's vendor, weight. */
const LINUX_GPUS: readonly (readonly [readonly [string, string, string], number])[] = [
  [['Intel', 'Mesa Intel(R) UHD Graphics 620 (KBL GT2)', 'Intel'], 30],
  [['Intel', 'Mesa Intel(R) Xe Graphics (TGL GT2)', 'Intel'], 20],
  [['NVIDIA Corporation', 'NVIDIA GeForce RTX 3060/PCIe/SSE2', 'NVIDIA Corporation'], 20],
  [['NVIDIA Corporation', 'NVIDIA GeForce GTX 1660 SUPER/PCIe/SSE2', 'NVIDIA Corporation'], 10],
  [['AMD', 'AMD Radeon RX 6600 (radeonsi, navi23, LLVM 15.0.7, DRM 3.54)', 'AMD'], 20],
];

/** Android phones: model, weight, screen, GL vendor, renderer, deviceMemory, Samsung, wide gamut. */
const ANDROIDS: readonly (readonly [string, number, Size, string, string, number, boolean, boolean])[] = [
  ['SM-A155F', 7, [800, 360], 'ARM', 'Mali-G57 MC2', 4, true, false],
  ['SM-A145F', 6, [800, 360], 'ARM', 'Mali-G52 MC2', 4, true, false],
  ['SM-A256B', 5, [892, 412], 'ARM', 'Mali-G68', 4, true, false],
  ['SM-A546B', 6, [892, 412], 'ARM', 'Mali-G68 MC4', 8, true, false],
  ['SM-A346B', 4, [892, 412], 'ARM', 'Mali-G68 MC4', 8, true, false],
  ['SM-S911B', 4, [780, 360], 'Qualcomm', 'Adreno (TM) 740', 8, true, true],
  ['SM-S921B', 4, [780, 360], 'Samsung Electronics Co., Ltd.', 'Samsung Xclipse 940', 8, true, true],
  ['SM-S901B', 3, [780, 360], 'Qualcomm', 'Adreno (TM) 730', 8, true, true],
  ['SM-G990B', 3, [854, 384], 'Qualcomm', 'Adreno (TM) 660', 8, true, true],
  ['SM-X200', 2, [1280, 800], 'ARM', 'Mali-G52 MC2', 4, true, false],
  ['Pixel 7', 3, [915, 412], 'ARM', 'Mali-G710', 8, false, true],
  ['Pixel 8', 3, [915, 412], 'ARM', 'Mali-G715', 8, false, true],
  ['Pixel 6a', 2, [915, 412], 'ARM', 'Mali-G78', 4, false, true],
  ['23021RAA2Y', 6, [873, 393], 'Qualcomm', 'Adreno (TM) 610', 4, false, false],
  ['23124RA7EO', 5, [873, 393], 'Qualcomm', 'Adreno (TM) 710', 8, false, false],
  ['23053RN02Y', 5, [854, 393], 'ARM', 'Mali-G52 MC2', 4, false, false],
  ['moto g54 5G', 3, [857, 385], 'Imagination Technologies', 'PowerVR B-Series BXM-8-256', 4, false, false],
  ['CPH2565', 4, [800, 360], 'ARM', 'Mali-G57 MC2', 4, false, false],
  ['RMX3710', 3, [800, 360], 'ARM', 'Mali-G52 MC2', 4, false, false],
  ['TECNO KI5q', 3, [800, 360], 'Imagination Technologies', 'PowerVR GE8320', 2, false, false],
];

/** iPhones: model, weight, screen, chip. */
const IPHONES: readonly (readonly [string, number, Size, string])[] = [
  ['iPhone 13', 12, [844, 390], 'A15'],
  ['iPhone 14', 10, [844, 390], 'A15'],
  ['iPhone 12', 8, [844, 390], 'A14'],
  ['iPhone 15', 10, [852, 393], 'A16'],
  ['iPhone 16', 8, [852, 393], 'A18'],
  ['iPhone 14 Pro', 6, [852, 393], 'A16'],
  ['iPhone 15 Pro', 6, [852, 393], 'A17'],
  ['iPhone 11', 8, [896, 414], 'A13'],
  ['iPhone 16 Pro', 5, [874, 402], 'A18'],
  ['iPhone 14 Pro Max', 6, [932, 430], 'A16'],
  ['iPhone 15 Pro Max', 6, [932, 430], 'A17'],
  ['iPhone 16 Pro Max', 5, [956, 440], 'A18'],
  ['iPhone 13 Pro Max', 3, [926, 428], 'A15'],
  ['iPhone SE', 4, [667, 375], 'A15'],
  ['iPhone 13 mini', 2, [812, 375], 'A15'],
  ['iPhone XR', 1, [896, 414], 'A12'],
];

// ---- Devices ----------------------------------------------------------------

export type Cohort = 'general' | 'fleet-laptop' | 'fleet-iphone';
export type Sibling = 'browser' | 'profile' | 'person';

/** What a device is: fixed for the device's life. */
export interface Profile {
  os: Os;
  /** OS release that shapes rendering (emoji and system fonts): 'win11', 'mac15', 'android14'; iOS uses the live iOS major. */
  osRelease: string;
  family: Family;
  mobile: boolean;
  /** Laptops and phones travel; desktops do not. */
  portable: boolean;
  country: string;
  model: string;
  webgl: { vendor: string; renderer: string };
  /** GPU identity as far as rendering goes (Safari masks the name but not the output). */
  gpuKey: string;
  cores: number;
  memory: number | null;
  arm: boolean;
  /** [built-in, external monitor]; `dockRate` of visits happen on the external one. */
  screens: readonly Size[];
  dockRate: number;
  frame: Frame;
  fonts: string[];
  /** The OS-supplied part of the fonts, which does shape canvas text; app fonts do not. */
  osFonts: string;
  touch: boolean;
  gamut: 'srgb' | 'p3';
  hdr: boolean;
  reducedMotion: boolean;
  contrastMore: boolean;
  forcedColors: boolean;
  minFont: number;
  defaultFontScale: number;
  sampleRate: number;
  cookies: boolean;
  pdfViewer: boolean;
  applePay: 'enabled' | 'disabled' | 'unsupported';
  /** A few devices render slightly differently from their stack (unusual font smoothing, GPU quirks). */
  canvasSalt: string;
  adblock: string[];
  /** Days between a release and this device running it. */
  updateLag: number;
  brave: boolean;
  quotaMb: number;
}

/** What a device is *now*; drift changes it. */
export interface DeviceState {
  major: number;
  /** iOS only: the OS major (Safari's major on iPhone). */
  osMajor: number;
  token: string;
  tokenCreatedAt: number;
  languages: string[];
  zone: Zone;
  homeZone: Zone;
  docked: boolean;
  /** The frame the OS reserves changes when the taskbar/dock is moved or hidden. */
  frame: Frame;
  screen: Size;
  extension: Extension | null;
}

/** An anti-fingerprinting extension: canvas noise, maybe audio noise, maybe a spoofed core count. */
export interface Extension {
  audio: boolean;
  spoofsCores: boolean;
}

export interface Device {
  /** The browser instance: its own token, its own visits, its own visitor. */
  id: number;
  /** The physical machine it runs on: the id of the machine's first instance (its own id for most devices). */
  physical: number;
  /** How a further instance on a machine differs from the first: another browser, another profile of the same browser, another person's OS account; null for the first. */
  sibling: Sibling | null;
  cohort: Cohort;
  /** Fleet members share an office network; null outside fleets. */
  fleet: number | null;
  /** Devices of one household share its home line. */
  household: number;
  /** The office network the device is also used at (fleets: their company's); null for none. */
  office: number | null;
  profile: Profile;
  state: DeviceState;
}

export const newToken = (r: Rng) => {
  const a = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  let s = '';
  for (let i = 0; i < 22; i++) s += a[Math.floor(r() * 64)];
  return s;
};

const ADBLOCK_LISTS = [
  ['adGuardBase', 'easyList'],
  ['adGuardBase', 'adGuardAnnoyances', 'easyList', 'easyListCookie'],
  ['easyList'],
  ['adGuardBase', 'easyList', 'fanboyAnnoyances', 'fanboySocial'],
];

function desktopFonts(r: Rng, os: Os, cjk: boolean): { fonts: string[]; osFonts: string } {
  const base: string[] = os === 'Windows' ? [...FONTS.windows, ...(cjk ? FONTS.windowsCjk : [])] : os === 'macOS' ? [...FONTS.mac] : [...FONTS.linux];
  const extra: string[] = [];
  if (os === 'Windows' && r() < 0.55) extra.push(...FONTS.office);
  if (os === 'macOS' && r() < 0.3) extra.push(...FONTS.macOffice);
  if (os !== 'Linux' && r() < 0.08) extra.push(...FONTS.adobe);
  if (os === 'Windows' && r() < 0.015) extra.push(...FONTS.corel);
  if (r() < 0.1) extra.push(pick(r, FONTS.stray), ...(r() < 0.3 ? [pick(r, FONTS.stray)] : []));
  return { fonts: inProbeOrder([...base, ...extra]), osFonts: base.join(',') };
}

const lagFor = (r: Rng, os: Os, family: Family) => {
  if (r() < 0.06) return 150 + r() * 400; // never updates during the window (ESR, blocked updates, old phones)
  if (family === 'Safari') return expo(r, os === 'iOS' ? 40 : 25);
  if (family === 'Samsung') return expo(r, 30);
  return expo(r, os === 'Android' || os === 'iOS' ? 10 : 6);
};

const defaultFrame = (r: Rng, os: Os, notch: boolean): Frame => {
  if (os === 'Windows')
    return {
      top: 0,
      right: 0,
      bottom: weighted(r, [
        [40, 45],
        [50, 35],
        [30, 12],
        [0, 3],
      ]),
      left: 0,
    };
  if (os === 'macOS') {
    const dock = weighted(r, [
      [80, 45],
      [70, 15],
      [60, 10],
      [0, 25],
      [-1, 5],
    ]);
    return dock === -1 ? { top: notch ? 40 : 30, right: 80, bottom: 0, left: 0 } : { top: notch ? 40 : 30, right: 0, bottom: dock, left: 0 };
  }
  if (os === 'Linux') return r() < 0.6 ? { top: 30, right: 0, bottom: 0, left: 0 } : { top: 0, right: 0, bottom: 40, left: 0 };
  return { top: 0, right: 0, bottom: 0, left: 0 };
};

interface Place {
  country: Country;
  zone: Zone;
  languages: string[];
}

function placeOf(r: Rng, world: World): Place {
  const weights = world.countries;
  const country = weighted(
    r,
    COUNTRIES.filter((c) => !weights || weights[c.code]).map((c) => [c, weights?.[c.code] ?? c.weight] as const),
  );
  return { country, zone: zoneOf(r, country), languages: [...weighted(r, country.langs)] };
}

function generalDevice(r: Rng, place: Place, mobile: boolean): Profile {
  const c = place.country;
  const os: Os = mobile
    ? r() < c.ios
      ? 'iOS'
      : 'Android'
    : weighted(r, [
        ['macOS', c.mac],
        ['Linux', 0.05],
        ['Windows', 0.95 - c.mac],
      ] as const);
  return os === 'iOS' ? iphone(r, c) : os === 'Android' ? android(r, c) : os === 'macOS' ? mac(r, c) : os === 'Linux' ? linux(r, c) : windows(r, c);
}

/** The browser mix of each OS's users (Samsung Internet on Samsung phones only). */
const BROWSERS = {
  Windows: [
    ['Chrome', 66],
    ['Edge', 20],
    ['Firefox', 9],
    ['Brave', 3],
  ],
  macOS: [
    ['Safari', 42],
    ['Chrome', 47],
    ['Firefox', 6],
    ['Edge', 2],
    ['Brave', 3],
  ],
  Linux: [
    ['Chrome', 50],
    ['Firefox', 45],
    ['Brave', 5],
  ],
  Samsung: [
    ['Chrome', 70],
    ['Samsung', 25],
    ['Firefox', 3],
    ['Brave', 2],
  ],
  Android: [
    ['Chrome', 95],
    ['Firefox', 3],
    ['Brave', 2],
  ],
} as const satisfies Record<string, readonly (readonly [Family, number])[]>;

/** Settings a user makes in the browser (per browser profile). */
const browserSettings = (r: Rng) => ({
  minFont: r() < 0.01 ? pick(r, [10, 12, 14]) : 0,
  defaultFontScale: r() < 0.015 ? pick(r, [1.125, 1.25, 0.875]) : 1,
  cookies: r() > 0.005,
});

/** What one installation of a browser has: its update lag and its storage quota. */
const installation = (r: Rng, os: Os, family: Family) => ({
  updateLag: lagFor(r, os, family),
  brave: family === 'Brave',
  quotaMb: Math.round(20_000 + r() * 280_000),
});

const common = (r: Rng, os: Os, family: Family, country: Country) => ({
  country: country.code,
  reducedMotion: r() < 0.03,
  contrastMore: r() < 0.015,
  ...browserSettings(r),
  canvasSalt: !['iOS', 'Android'].includes(os) && r() < 0.03 ? String(Math.floor(r() * 1e9)) : '',
  ...installation(r, os, family),
});

/** Content-blocker lists a browser of this family on this OS has installed (none on iPhones). */
const adblockOf = (r: Rng, os: Os, family: Family): string[] => {
  const share = { Windows: family === 'Firefox' ? 0.45 : 0.25, macOS: 0.2, Linux: 0.45, Android: family === 'Samsung' ? 0.1 : 0, iOS: 0 }[os];
  return share > 0 && r() < share ? pick(r, ADBLOCK_LISTS) : [];
};

const applePayOf = (r: Rng, os: Os, family: Family): Profile['applePay'] =>
  family === 'Safari' ? (r() < (os === 'iOS' ? 0.6 : 0.3) ? 'enabled' : 'disabled') : 'unsupported';

/** WebGL vendor and renderer as each browser reports a Windows GPU (ANGLE on Direct3D 11; Firefox without the PCI id). */
const windowsWebgl = (family: Family, [gv, name, pci]: (typeof WIN_GPUS)[number]) =>
  family === 'Firefox'
    ? { vendor: `Google Inc. (${gv})`, renderer: `ANGLE (${gv}, ${name} Direct3D11 vs_5_0 ps_5_0), or similar` }
    : { vendor: `Google Inc. (${gv})`, renderer: `ANGLE (${gv}, ${name} (${pci}) Direct3D11 vs_5_0 ps_5_0, D3D11)` };

/** ... of a Mac's GPU: Safari masks it, Firefox rounds it, Chromium goes through ANGLE on Metal. */
const macWebgl = (family: Family, chip: string) => {
  const silicon = MAC_CHIPS.find((m) => m[0] === chip)![4];
  const gv = silicon ? 'Apple' : chip.startsWith('AMD') ? 'AMD' : 'Intel';
  return family === 'Safari'
    ? { vendor: 'Apple Inc.', renderer: 'Apple GPU' }
    : family === 'Firefox'
      ? { vendor: silicon ? 'Apple' : `${gv} Inc.`, renderer: `${chip}, or similar` }
      : { vendor: `Google Inc. (${gv})`, renderer: `ANGLE (${gv}, ANGLE Metal Renderer: ${chip}, Unspecified Version)` };
};

/** ... of a Linux GPU: Firefox reports the Mesa/driver strings, Chromium through ANGLE on OpenGL. */
const linuxWebgl = (family: Family, [gv, name, ffVendor]: (typeof LINUX_GPUS)[number][0]) =>
  family === 'Firefox' ? { vendor: ffVendor, renderer: name } : { vendor: `Google Inc. (${gv})`, renderer: `ANGLE (${gv}, ${name}, OpenGL 4.6)` };

/** deviceMemory of Windows PCs by core count (fleet images: 8 GB). */
const windowsMemory = (r: Rng, cores: number, fleet: boolean) =>
  cores <= 4
    ? weighted(r, [
        [4, 50],
        [8, 40],
        [2, 10],
      ])
    : fleet
      ? 8
      : weighted(r, [
          [8, 85],
          [4, 15],
        ]);

function windows(r: Rng, c: Country, fixed?: { family: Family; gpu: (typeof WIN_GPUS)[number]; screen: Size; external: Size }): Profile {
  const laptop = fixed ? true : r() < 0.6;
  const family: Family = fixed?.family ?? weighted(r, BROWSERS.Windows);
  const integratedGpu = r() < (laptop ? 0.88 : 0.3);
  const gpu =
    fixed?.gpu ??
    weighted(
      r,
      WIN_GPUS.filter((g) => g[4] === integratedGpu).map((g) => [g, g[3]] as const),
    );
  const [, name, , , integrated] = gpu;
  const cores = fixed
    ? 8
    : weighted(
        r,
        integrated
          ? [
              [4, 15],
              [8, 45],
              [12, 25],
              [16, 15],
            ]
          : [
              [6, 10],
              [8, 20],
              [12, 25],
              [16, 30],
              [20, 8],
              [24, 5],
              [32, 2],
            ],
      );
  const fonts = fixed
    ? {
        fonts: inProbeOrder([...FONTS.windows, ...(c.cjk ? FONTS.windowsCjk : []), ...FONTS.office]),
        osFonts: [...FONTS.windows, ...(c.cjk ? FONTS.windowsCjk : [])].join(','),
      }
    : desktopFonts(r, 'Windows', c.cjk ?? false);
  const builtIn = fixed?.screen ?? weighted(r, laptop ? WIN_LAPTOP_SCREENS : WIN_DESKTOP_SCREENS);
  const docks = fixed ? true : laptop && r() < 0.3;
  return {
    ...common(r, 'Windows', family, c),
    os: 'Windows',
    osRelease: fixed ? 'win11' : r() < 0.45 ? 'win11' : 'win10',
    family,
    mobile: false,
    portable: laptop,
    model: name,
    webgl: windowsWebgl(family, gpu),
    gpuKey: name,
    cores,
    memory: family === 'Firefox' ? null : windowsMemory(r, cores, fixed !== undefined),
    arm: false,
    screens: docks ? [builtIn, fixed?.external ?? weighted(r, EXTERNAL_SCREENS)] : [builtIn],
    dockRate: docks ? (fixed ? 0.5 : 0.2 + r() * 0.5) : 0,
    frame: fixed ? { top: 0, right: 0, bottom: 50, left: 0 } : defaultFrame(r, 'Windows', false),
    ...fonts,
    touch: !fixed && laptop && r() < 0.15,
    gamut: !fixed && laptop && r() < 0.12 ? 'p3' : 'srgb',
    hdr: !fixed && r() < 0.03,
    forcedColors: !fixed && r() < 0.005,
    sampleRate: fixed ? 48000 : r() < 0.75 ? 48000 : 44100,
    pdfViewer: true,
    applePay: 'unsupported',
    adblock: fixed ? [] : adblockOf(r, 'Windows', family),
  };
}

function mac(r: Rng, c: Country): Profile {
  const family: Family = weighted(r, BROWSERS.macOS);
  const [chip, , chromeCores, pro, silicon] = weighted(
    r,
    MAC_CHIPS.map((m) => [m, m[1]] as const),
  );
  const desktop = r() < 0.12;
  const notch = silicon && (pro || ['Apple M2', 'Apple M3', 'Apple M4'].includes(chip));
  const builtIn: Size = desktop
    ? weighted(r, [
        [[2560, 1440], 45],
        [[1920, 1080], 35],
        [[2240, 1260], 20],
      ] as const)
    : pro
      ? weighted(r, [
          [[1512, 982], 60],
          [[1728, 1117], 35],
          [[1800, 1169], 5],
        ] as const)
      : notch
        ? weighted(r, [
            [[1470, 956], 70],
            [[1710, 1107], 10],
            [[1440, 900], 20],
          ] as const)
        : weighted(r, [
            [[1440, 900], 70],
            [[1280, 800], 10],
            [[1680, 1050], 20],
          ] as const);
  const docks = !desktop && r() < 0.25;
  return {
    ...common(r, 'macOS', family, c),
    os: 'macOS',
    osRelease: weighted(r, [
      ['mac15', 55],
      ['mac14', 30],
      ['mac13', 10],
      ['mac12', 5],
    ] as const),
    family,
    mobile: false,
    portable: !desktop,
    model: chip,
    webgl: macWebgl(family, chip),
    gpuKey: chip,
    cores: family === 'Safari' ? 8 : chromeCores,
    memory: family === 'Safari' || family === 'Firefox' ? null : 8,
    arm: silicon,
    screens: docks ? [builtIn, weighted(r, EXTERNAL_SCREENS)] : [builtIn],
    dockRate: docks ? 0.2 + r() * 0.5 : 0,
    frame: defaultFrame(r, 'macOS', notch && !desktop),
    ...desktopFonts(r, 'macOS', false),
    touch: false,
    gamut: desktop && builtIn[0] === 1920 ? 'srgb' : 'p3',
    hdr: pro && silicon,
    forcedColors: false,
    sampleRate: r() < 0.5 ? 48000 : 44100,
    pdfViewer: true,
    applePay: applePayOf(r, 'macOS', family),
    adblock: adblockOf(r, 'macOS', family),
  };
}

function linux(r: Rng, c: Country): Profile {
  const family: Family = weighted(r, BROWSERS.Linux);
  const gpu = weighted(r, LINUX_GPUS);
  const name = gpu[1];
  const cores = weighted(r, [
    [4, 15],
    [8, 35],
    [12, 20],
    [16, 25],
    [32, 5],
  ]);
  return {
    ...common(r, 'Linux', family, c),
    os: 'Linux',
    osRelease: r() < 0.4 ? 'ubuntu' : 'linux',
    family,
    mobile: false,
    portable: false,
    model: name,
    webgl: linuxWebgl(family, gpu),
    gpuKey: name,
    cores,
    memory: family === 'Firefox' ? null : cores <= 4 ? 4 : 8,
    arm: false,
    screens: [weighted(r, LINUX_SCREENS)],
    dockRate: 0,
    frame: defaultFrame(r, 'Linux', false),
    ...desktopFonts(r, 'Linux', false),
    touch: false,
    gamut: 'srgb',
    hdr: false,
    forcedColors: false,
    sampleRate: r() < 0.6 ? 48000 : 44100,
    pdfViewer: true,
    applePay: 'unsupported',
    adblock: adblockOf(r, 'Linux', family),
  };
}

function android(r: Rng, c: Country): Profile {
  const [model, , screen, gv, renderer, memory, samsung, wide] = weighted(
    r,
    ANDROIDS.map((a) => [a, a[1]] as const),
  );
  const family: Family = weighted(r, samsung ? BROWSERS.Samsung : BROWSERS.Android);
  return {
    ...common(r, 'Android', family, c),
    os: 'Android',
    osRelease: `android${weighted(r, [
      [15, 25],
      [14, 40],
      [13, 22],
      [12, 13],
    ] as const)}`,
    family,
    mobile: true,
    portable: true,
    model,
    webgl: { vendor: gv, renderer },
    gpuKey: renderer,
    cores: 8,
    memory: family === 'Firefox' ? null : memory,
    arm: true,
    screens: [screen],
    dockRate: 0,
    frame: defaultFrame(r, 'Android', false),
    fonts: [...FONTS.android],
    osFonts: 'android',
    touch: true,
    gamut: wide ? 'p3' : 'srgb',
    hdr: wide && r() < 0.5,
    forcedColors: false,
    sampleRate: r() < 0.85 ? 48000 : 44100,
    pdfViewer: false,
    applePay: 'unsupported',
    adblock: adblockOf(r, 'Android', family),
  };
}

function iphone(r: Rng, c: Country, fixedModel?: (typeof IPHONES)[number]): Profile {
  const [model, , screen, chip] =
    fixedModel ??
    weighted(
      r,
      IPHONES.map((m) => [m, m[1]] as const),
    );
  const family: Family = fixedModel || r() < 0.88 ? 'Safari' : 'Chrome';
  return {
    ...common(r, 'iOS', family, c),
    os: 'iOS',
    osRelease: 'ios',
    family,
    mobile: true,
    portable: true,
    model,
    webgl: { vendor: 'Apple Inc.', renderer: 'Apple GPU' },
    gpuKey: chip,
    // WebKit reports 4 or 8 cores whatever the chip has.
    cores: 4,
    memory: null,
    arm: true,
    screens: [screen],
    dockRate: 0,
    frame: defaultFrame(r, 'iOS', false),
    fonts: [...FONTS.ios],
    osFonts: 'ios',
    touch: true,
    gamut: 'p3',
    hdr: !['A12', 'A13'].includes(chip),
    forcedColors: false,
    sampleRate: 48000,
    pdfViewer: false,
    applePay: applePayOf(r, 'iOS', family),
    adblock: [],
  };
}

/** Initial state on the first visit at day `day`. */
function initialState(r: Rng, p: Profile, place: Place, day: number): DeviceState {
  const train = trainOf(p);
  const major = majorOn(train, day - p.updateLag);
  const osMajor = p.os === 'iOS' ? majorOn('apple', day - p.updateLag) : 0;
  const languages = p.os === 'iOS' && p.family === 'Safari' ? place.languages.slice(0, 1) : p.brave ? place.languages.slice(0, 1) : place.languages;
  return {
    major,
    osMajor,
    token: newToken(r),
    tokenCreatedAt: START + Math.round(day * DAY),
    languages,
    zone: place.zone,
    homeZone: place.zone,
    docked: false,
    frame: p.frame,
    screen: p.screens[0]!,
    extension: !p.mobile && !p.brave && r() < 0.01 ? { audio: r() < 0.4, spoofsCores: r() < 0.2 } : null,
  };
}

export interface Born {
  device: Device;
  /** Day of the first visit. */
  firstDay: number;
}

export const WINDOW_DAYS = 120;

/** Fleet members share one image and its settings: nothing per device but the token. */
const UNIFORM = { reducedMotion: false, contrastMore: false, minFont: 0, defaultFontScale: 1, cookies: true, canvasSalt: '' } as const;

/**
 * `n` devices: fleets of identical corporate laptops (same model, image,
 * browser channel and update ring, country, office) and of identical managed
 * iPhones, then households of independently drawn devices sharing a home
 * line, where a later phone may be a copy of the first (same model, settings
 * and language: a family's identical phones). Laptops and some desktops are
 * also used at offices shared with coworkers.
 */
export function generatePopulation(n: number, seed: number, world: World): Born[] {
  const r = rng(seed);
  const out: Born[] = [];
  let fleets = 0;
  let households = 0;
  let offices = 0;
  const openOffice = new Map<string, { id: number; left: number }>();
  const homes: Place[] = [];
  const officeIn = (country: string) => {
    let o = openOffice.get(country);
    if (!o || o.left <= 0) openOffice.set(country, (o = { id: offices++, left: Math.max(2, Math.round(expo(r, world.officeSize))) }));
    o.left--;
    return o.id;
  };
  const add = (cohort: Cohort, profile: Profile, place: Place, household: number, office: number | null, fleet: number | null = null) => {
    const firstDay = r() * WINDOW_DAYS;
    homes[household] = place;
    out.push({
      device: {
        id: out.length,
        physical: out.length,
        sibling: null,
        cohort,
        fleet,
        household,
        office,
        profile,
        state: initialState(r, profile, place, firstDay),
      },
      firstDay,
    });
  };
  const fleetTarget = Math.round(n * world.fleetLaptops);
  while (out.length < fleetTarget) {
    const size = Math.min(fleetTarget - out.length, Math.round(Math.exp(Math.log(20) + r() * Math.log(20))));
    const place = placeOf(r, world);
    const gpu = weighted(
      r,
      WIN_GPUS.filter((g) => g[4]).map((g) => [g, g[3]] as const),
    );
    const fixed = {
      family: r() < 0.5 ? ('Edge' as const) : ('Chrome' as const),
      gpu,
      screen: pick(r, [
        [1536, 864],
        [1920, 1080],
      ] as const),
      external: [1920, 1080] as const,
    };
    const lag = expo(r, 6);
    const fleet = fleets++;
    const office = offices++;
    for (let i = 0; i < size; i++)
      add('fleet-laptop', { ...windows(r, place.country, fixed), ...UNIFORM, updateLag: lag, quotaMb: 150_000 }, place, households++, office, fleet);
  }
  const phoneTarget = fleetTarget + Math.round(n * world.fleetPhones);
  while (out.length < phoneTarget) {
    const size = Math.min(phoneTarget - out.length, Math.round(Math.exp(Math.log(10) + r() * Math.log(20))));
    const place = placeOf(r, world);
    const model = pick(
      r,
      IPHONES.filter((m) => ['A15', 'A16'].includes(m[3])),
    );
    const lag = expo(r, 20);
    const fleet = fleets++;
    const office = offices++;
    for (let i = 0; i < size; i++)
      add(
        'fleet-iphone',
        { ...iphone(r, place.country, model), ...UNIFORM, applePay: 'enabled', updateLag: lag, quotaMb: 60_000 },
        place,
        households++,
        office,
        fleet,
      );
  }
  while (out.length < n) {
    const household = households++;
    const place = placeOf(r, world);
    let firstPhone: Profile | null = null;
    for (let k = Math.min(6, 1 + Math.round(expo(r, world.householdSize - 1 + 1e-9))); k > 0 && out.length < n; k--) {
      const mobile = r() < world.mobileShare;
      const copy: boolean = mobile && firstPhone !== null && r() < world.identicalPhones;
      const profile: Profile = copy ? { ...firstPhone! } : generalDevice(r, place, mobile);
      if (mobile && !firstPhone) firstPhone = profile;
      const office = profile.mobile
        ? null
        : profile.portable
          ? r() < world.officeWorkers
            ? officeIn(place.country.code)
            : null
          : r() < world.officeWorkers * 0.25
            ? officeIn(place.country.code)
            : null;
      add('general', profile, place, household, office);
    }
  }
  if (world.siblings) addSiblings(out, homes, world.siblings, seed);
  return out;
}

/** How many people besides its first user share a family computer. */
const OTHER_PEOPLE = [
  [1, 55],
  [2, 30],
  [3, 15],
] as const;

/**
 * Further browser instances on home devices (fleets stay one browser each,
 * pure look-alikes), appended with new ids from a stream of their own, so
 * that the devices before them and their visits are those of the world
 * without. An instance shares its machine's hardware, OS, fonts, screens,
 * household and office, and has its own token, visits and first day.
 */
function addSiblings(out: Born[], homes: readonly Place[], rates: Siblings, seed: number) {
  const r = rng(seed * 2_654_435 + 17);
  const add = (of: Device, sibling: Sibling, profile: Profile, sameLanguages: number) => {
    const home = homes[of.household]!;
    const firstDay = r() * WINDOW_DAYS;
    const place = r() < sameLanguages ? home : { ...home, languages: otherLanguages(r, home) };
    out.push({
      device: { ...of, id: out.length, sibling, profile, state: initialState(r, profile, place, firstDay) },
      firstDay,
    });
  };
  for (const { device: d } of out.slice()) {
    if (d.cohort !== 'general') continue;
    const p = d.profile;
    // Another browser; a third on some (iPhones: Safari and Chrome only).
    if (r() < (p.mobile ? rates.phones : rates.desktops)) {
      const second = inBrowser(r, p, otherBrowser(r, p, [p.family]));
      add(d, 'browser', second, 0.85);
      if (p.os !== 'iOS' && r() < rates.third) add(d, 'browser', inBrowser(r, p, otherBrowser(r, p, [p.family, second.family])), 0.85);
    }
    if (p.mobile) continue;
    // A second profile of the same browser: same binary and settings, maybe other content blockers.
    if (r() < rates.profiles) add(d, 'profile', { ...p, adblock: r() < 0.5 ? p.adblock : adblockOf(r, p.os, p.family) }, 0.85);
    // A computer at home shared by 2–4 people, each with an OS account (taskbar, accessibility) and a browser of their own.
    if (d.office === null && r() < rates.shared) {
      for (let k = weighted(r, OTHER_PEOPLE); k > 0; k--) {
        const own = inBrowser(r, p, weighted(r, browsersOn(p)));
        const frame = defaultFrame(r, p.os, false);
        const account = { reducedMotion: r() < 0.03, contrastMore: r() < 0.015, frame: p.os === 'macOS' ? { ...frame, top: p.frame.top } : frame };
        add(d, 'person', { ...own, ...account }, 0.7);
      }
    }
  }
}

/** The browser mix of the device's OS (for an iPhone, Safari and Chrome). */
const browsersOn = (p: Profile): readonly (readonly [Family, number])[] =>
  p.os === 'iOS'
    ? [
        ['Safari', 88],
        ['Chrome', 12],
      ]
    : p.os === 'Android'
      ? ANDROIDS.find((a) => a[0] === p.model)![6]
        ? BROWSERS.Samsung
        : BROWSERS.Android
      : BROWSERS[p.os];

const otherBrowser = (r: Rng, p: Profile, taken: readonly Family[]): Family =>
  weighted(
    r,
    browsersOn(p).filter(([f]) => !taken.includes(f)),
  );

/**
 * The same machine in another browser: what that browser reports of the
 * hardware (WebGL strings, deviceMemory, Safari's 8 cores on Macs), and the
 * browser's own settings, content blockers and installation. The same
 * browser again (another person's OS account) is the same installation.
 */
function inBrowser(r: Rng, p: Profile, family: Family): Profile {
  const memory = (): number | null => {
    if (family === 'Firefox' || family === 'Safari' || p.os === 'iOS') return null;
    if (p.memory !== null) return p.memory;
    if (p.os === 'Windows') return windowsMemory(r, p.cores, false);
    if (p.os === 'Android') return ANDROIDS.find((a) => a[0] === p.model)![5];
    return p.os === 'Linux' && p.cores <= 4 ? 4 : 8;
  };
  const webgl =
    p.os === 'Windows'
      ? windowsWebgl(
          family,
          WIN_GPUS.find((g) => g[1] === p.gpuKey)!,
        )
      : p.os === 'macOS'
        ? macWebgl(family, p.gpuKey)
        : p.os === 'Linux'
          ? linuxWebgl(family, LINUX_GPUS.find((g) => g[0][1] === p.gpuKey)![0])
          : p.webgl;
  return {
    ...p,
    ...browserSettings(r),
    ...(family === p.family ? {} : installation(r, p.os, family)),
    family,
    webgl,
    cores: p.os === 'macOS' ? (family === 'Safari' ? 8 : MAC_CHIPS.find((m) => m[0] === p.gpuKey)![2]) : p.cores,
    memory: memory(),
    applePay: family === p.family ? p.applePay : applePayOf(r, p.os, family),
    adblock: adblockOf(r, p.os, family),
  };
}

/** Another language list of the home's country (a person or browser set up in another language), else one more language. */
function otherLanguages(r: Rng, home: Place): string[] {
  const others = home.country.langs.filter(([ls]) => ls.join() !== home.languages.join());
  if (others.length) return [...weighted(r, others)];
  return [
    ...home.languages,
    pick(
      r,
      EXTRA_LANGUAGES.filter((l) => !home.languages.includes(l)),
    ),
  ];
}

// ---- Signals ----------------------------------------------------------------

const engineOf = (p: Profile) => (p.os === 'iOS' || p.family === 'Safari' ? 'webkit' : p.family === 'Firefox' ? 'gecko' : 'blink');
const engineKey = (p: Profile) => (p.os === 'iOS' ? 'ios' : p.family === 'Samsung' ? 'samsung' : engineOf(p));

/** The rendering major: iOS browsers all render with the OS's WebKit. */
const renderMajor = (p: Profile, s: DeviceState) => (p.os === 'iOS' ? s.osMajor : s.major);

/** The hardware+software stack that decides rendered output. */
const stackOf = (p: Profile) => [p.os, p.osRelease, engineOf(p), p.gpuKey, p.osFonts].join('/');

function rendering(p: Profile, s: DeviceState, what: Rendering): number {
  const yearly = p.os === 'iOS' || p.family === 'Safari';
  return renderEpoch(engineKey(p), yearly, what, renderMajor(p, s));
}

/** The engine's rendering epochs; a change means an update altered canvas, WebGL, math or audio output. */
export const renderingKey = (p: Profile, s: DeviceState) => (Object.keys(CHANGE_RATE) as Rendering[]).map((w) => rendering(p, s, w)).join(',');

const CHROMIUM_BRAND: Partial<Record<Family, string>> = { Chrome: 'Google Chrome', Edge: 'Microsoft Edge', Brave: 'Brave', Samsung: 'Samsung Internet' };

function userAgentOf(p: Profile, s: DeviceState): SignalValues['userAgent'] {
  const M = s.major;
  const chromeTail = `AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${M}.0.0.0`;
  const iosVersion = s.osMajor >= 26 ? '18_6' : `${s.osMajor}_6`;
  let ua: string;
  switch (p.os) {
    case 'Windows':
      ua =
        p.family === 'Firefox'
          ? `Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:${M}.0) Gecko/20100101 Firefox/${M}.0`
          : `Mozilla/5.0 (Windows NT 10.0; Win64; x64) ${chromeTail} Safari/537.36${p.family === 'Edge' ? ` Edg/${M}.0.0.0` : ''}`;
      break;
    case 'macOS':
      ua =
        p.family === 'Firefox'
          ? `Mozilla/5.0 (Macintosh; Intel Mac OS X 10.15; rv:${M}.0) Gecko/20100101 Firefox/${M}.0`
          : p.family === 'Safari'
            ? `Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/${M}.0 Safari/605.1.15`
            : `Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) ${chromeTail} Safari/537.36${p.family === 'Edge' ? ` Edg/${M}.0.0.0` : ''}`;
      break;
    case 'Linux':
      ua =
        p.family === 'Firefox'
          ? `Mozilla/5.0 (X11; ${p.osRelease === 'ubuntu' ? 'Ubuntu; ' : ''}Linux x86_64; rv:${M}.0) Gecko/20100101 Firefox/${M}.0`
          : `Mozilla/5.0 (X11; Linux x86_64) ${chromeTail} Safari/537.36`;
      break;
    case 'Android':
      ua =
        p.family === 'Firefox'
          ? `Mozilla/5.0 (Android ${p.osRelease.slice(7)}; Mobile; rv:${M}.0) Gecko/${M}.0 Firefox/${M}.0`
          : p.family === 'Samsung'
            ? `Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/${M}.0 Chrome/${M + 102}.0.0.0 Mobile Safari/537.36`
            : `Mozilla/5.0 (Linux; Android 10; K) ${chromeTail} Mobile Safari/537.36`;
      break;
    case 'iOS':
      ua =
        p.family === 'Chrome'
          ? `Mozilla/5.0 (iPhone; CPU iPhone OS ${iosVersion} like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/${M}.0.7258.76 Mobile/15E148 Safari/604.1`
          : `Mozilla/5.0 (iPhone; CPU iPhone OS ${iosVersion} like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/${s.osMajor}.0 Mobile/15E148 Safari/604.1`;
      break;
  }
  const brand = CHROMIUM_BRAND[p.family];
  const chCapable = brand !== undefined && p.os !== 'iOS';
  const platform = { Windows: 'Windows', macOS: 'macOS', Linux: 'Linux', Android: 'Android', iOS: 'iOS' }[p.os];
  return {
    userAgent: ua,
    brands: chCapable
      ? [
          { brand: 'Chromium', version: `${M}.0.7258.128` },
          { brand, version: `${M}.0.7258.128` },
        ]
      : [],
    mobile: chCapable ? p.mobile : null,
    platform: chCapable ? platform : null,
    platformVersion: chCapable
      ? p.os === 'Windows'
        ? p.osRelease === 'win11'
          ? '15.0.0'
          : '10.0.0'
        : p.os === 'Android'
          ? `${p.osRelease.slice(7)}.0.0`
          : '15.5.0'
      : null,
    architecture: chCapable ? (p.arm ? 'arm' : 'x86') : null,
    bitness: chCapable ? '64' : null,
    model: chCapable ? (p.mobile ? p.model : '') : null,
  };
}

const px = (n: number) => Math.round(n * 64) / 64;

/** The device's full signal values as collected in a normal (non-private) visit. */
export function signalsOf(p: Profile, s: DeviceState): SpecSignalValues {
  const engine = engineOf(p);
  const blink = engine === 'blink';
  const safari = p.family === 'Safari';
  const stack = stackOf(p);
  const canvasEpoch = rendering(p, s, 'canvas');
  const fp = (k: number) => px(100 + unit(stack, engineKey(p), k) * 60);
  const [width, height] = s.screen;
  return {
    canvas: { hash: digest('canvas', stack, canvasEpoch, p.canvasSalt), isFarbled: false },
    webgl: { ...p.webgl },
    audio: { hash: digest('audio', engineKey(p), p.os, p.arm, rendering(p, s, 'audio')), sampleRate: p.sampleRate },
    navigator: {
      hardwareConcurrency: p.cores,
      platform: { Windows: 'Win32', macOS: 'MacIntel', Linux: 'Linux x86_64', Android: 'Linux armv81', iOS: 'iPhone' }[p.os],
      languages: [...s.languages],
    },
    fonts: { installed: [...p.fonts] },
    fontPreferences: {
      default: px(fp(1) * p.defaultFontScale),
      serif: px(fp(2) * p.defaultFontScale),
      sans: fp(3),
      mono: fp(4),
      system: fp(5),
      apple: fp(6),
      min: p.minFont > 0 ? px(p.minFont * 1.02) : px(9 + unit(stack, 'min') * 0.5),
    },
    domBlockers: { hidden: [...p.adblock], probed: 40 },
    screenResolution: { width, height },
    screenFrame: { ...s.frame },
    color: { depth: safari && p.os === 'macOS' ? 30 : 24, gamut: p.gamut },
    hdr: { high: p.hdr },
    contrast: { level: p.contrastMore ? 'more' : 'no-preference' },
    reducedMotion: { reduce: p.reducedMotion },
    reducedTransparency: { reduce: blink ? false : null },
    forcedColors: { active: p.forcedColors },
    invertedColors: { inverted: engine === 'webkit' ? false : null },
    monochrome: { bitsPerPixel: 0 },
    timezone: { name: s.zone.name, offset: s.zone.offset },
    plugins: p.pdfViewer
      ? {
          count: 5,
          names: ['PDF Viewer', 'Chrome PDF Viewer', 'Chromium PDF Viewer', 'Microsoft Edge PDF Viewer', 'WebKit built-in PDF'],
          hash: digest('plugins', 'pdf5'),
        }
      : { count: 0, names: [], hash: digest('plugins', 'none') },
    touchSupport: p.touch
      ? { maxTouchPoints: p.mobile ? 5 : 10, touchEvent: true, touchStart: true }
      : { maxTouchPoints: 0, touchEvent: false, touchStart: false },
    math: { hash: digest('math', engineKey(p), rendering(p, s, 'math'), engine === 'gecko' ? p.os : '') },
    storage: { localStorage: true, sessionStorage: true, indexedDB: true, openDatabase: false },
    cookiesEnabled: { enabled: p.cookies },
    pdfViewerEnabled: { enabled: p.pdfViewer },
    vendor: blink
      ? { vendor: 'Google Inc.', flavors: p.family === 'Samsung' ? ['chrome', 'samsungAr'] : ['chrome'] }
      : engine === 'webkit'
        ? { vendor: 'Apple Computer, Inc.', flavors: p.family === 'Chrome' ? ['__crWeb', '__gCrWeb'] : p.os === 'macOS' ? ['safari'] : [] }
        : { vendor: '', flavors: [] },
    architecture: { nanByte: p.arm ? 127 : 255 },
    applePay: { state: p.applePay },
    privateClickMeasurement: { sourceId: safari ? '0' : null },
    webglExtensions: {
      version: blink ? 'WebGL 1.0 (OpenGL ES 2.0 Chromium)' : 'WebGL 1.0',
      shadingLanguageVersion: blink ? 'WebGL GLSL ES 1.0 (OpenGL ES GLSL ES 1.0 Chromium)' : 'WebGL GLSL ES 1.0',
      vendor: engine === 'gecko' ? 'Mozilla' : 'WebKit',
      renderer: engine === 'gecko' ? 'Mozilla' : 'WebKit WebGL',
      extensionCount: 20 + Math.floor(unit(p.gpuKey, engine) * 20),
      extensionsHash: digest('ext', engineKey(p), p.os, p.gpuKey, rendering(p, s, 'webglCaps')),
      parametersHash: digest('par', engineKey(p), p.os, p.gpuKey),
    },
    audioBaseLatency: {
      baseLatency: blink
        ? p.os === 'Windows'
          ? 0.01
          : p.os === 'Android'
            ? Math.round((0.003 + unit(p.model) * 0.02) * 1e4) / 1e4
            : Math.round((256 / p.sampleRate) * 1e6) / 1e6
        : null,
    },
    dateTimeLocale: { locale: s.languages[0] ?? 'en-US' },
    osCpu: {
      oscpu:
        engine === 'gecko'
          ? { Windows: 'Windows NT 10.0; Win64; x64', macOS: 'Intel Mac OS X 10.15', Linux: 'Linux x86_64', Android: 'Linux aarch64', iOS: null }[p.os]
          : null,
    },
    userAgent: userAgentOf(p, s),
    deviceMemory: { gigabytes: p.memory },
    automation: {
      webdriver: false,
      headlessUserAgent: false,
      emptyPlugins: false,
      emptyLanguages: false,
      zeroOuterSize: false,
      notificationQuirk: false,
      missingChromeObject: false,
      globals: [],
      documentAttributes: [],
    },
    tampering: { lieCount: 0, lies: [], canvasNoise: 0, audioNoise: 0 },
    devtools: { open: false, widthGap: p.mobile ? 0 : 16, heightGap: p.mobile ? 0 : 87 },
    incognito: { likely: false, quotaMb: p.quotaMb, heapLimitMb: blink ? (p.mobile ? 2048 : 4096) : null, opfsError: null },
    privacyBrowser: p.brave ? { name: 'Brave', markers: ['navigator.brave'] } : { name: null, markers: [] },
    virtualMachine: { softwareRenderer: false, virtualGpu: null, markers: [] },
    deviceToken: { token: s.token, storage: 'localStorage', createdAt: s.tokenCreatedAt },
  };
}
