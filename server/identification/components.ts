// Turns collected signals into the components the matcher compares: each a
// short canonical string with a weight. Stable components form the exact-match
// key; volatile ones (languages, window frame, UA version, blockers) only add
// evidence to fuzzy scoring. Signals known to be randomised on this device
// (farbled canvas, noisy audio) are left out rather than trusted.
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { UAParser } from 'ua-parser-js';
import type { SignalValues } from '../../contract/signals.js';

export type Signals = Partial<SignalValues>;

export interface ComponentSpec {
  weight: number;
  /** Stable components make up the exact key; volatile ones only score. */
  stable: boolean;
  /** Compared by string similarity instead of equality (values that drift a little). */
  fuzzy?: boolean;
}

/**
 * Weights follow how well a component separates *look-alike* devices and how
 * rarely one device changes it. Rendering outputs (canvas, WebGL, audio,
 * math) are shared by every device with the same hardware+software stack and
 * change with browser updates, so they weigh little; the user's environment
 * (time zone, screen, fonts, settings) differs between look-alikes and
 * rarely changes, so one such difference alone keeps a fuzzy match below
 * a link (bench/accuracy: fuzzy links to another device fell from 87 % to
 * 51 %, recall rose 91→96 % when they were introduced).
 */
export const COMPONENTS = {
  canvas: { weight: 1, stable: true },
  webgl: { weight: 1, stable: true, fuzzy: true },
  webglCaps: { weight: 0.75, stable: true },
  audio: { weight: 0.75, stable: true },
  fonts: { weight: 8, stable: true, fuzzy: true },
  fontPreferences: { weight: 5, stable: true },
  screen: { weight: 6, stable: true },
  hardware: { weight: 6, stable: true },
  platform: { weight: 1, stable: true },
  timezone: { weight: 8, stable: true },
  math: { weight: 0.5, stable: true },
  browser: { weight: 1, stable: true },
  vendor: { weight: 0.5, stable: true },
  plugins: { weight: 0.5, stable: true },
  touch: { weight: 4, stable: true },
  color: { weight: 4, stable: true },
  audioLatency: { weight: 3, stable: true },
  osCpu: { weight: 0.5, stable: true },
  mediaPrefs: { weight: 5, stable: true },
  // Low: it merges three signals, so one of them failing to collect changes it.
  storageFlags: { weight: 1, stable: true },
  safari: { weight: 5, stable: true },
  languages: { weight: 5, stable: false, fuzzy: true },
  locale: { weight: 2, stable: false },
  uaVersion: { weight: 0.25, stable: false },
  screenFrame: { weight: 0.25, stable: false },
  domBlockers: { weight: 0.25, stable: false },
} as const satisfies Record<string, ComponentSpec>;

export type ComponentName = keyof typeof COMPONENTS;

/**
 * Components kept on the visitor for the related-visitors model
 * (related.ts) and for nothing else: not in COMPONENTS, so the matcher, the
 * exact and partial keys and coverage never see them, and a set that
 * differs from another only in them is the same set (record.ts
 * sameComponents). `fontMetrics`: the fontMetrics signal's hash, the same
 * in every browser of one machine.
 */
export const RELATED_ONLY = ['fontMetrics'] as const;
export type RelatedOnlyName = (typeof RELATED_ONLY)[number];
export type Components = Partial<Record<ComponentName | RelatedOnlyName, string>>;

/** Whether `name` is one the matcher weighs (not a RELATED_ONLY one). */
export const isMatched = (name: string): name is ComponentName => Object.hasOwn(COMPONENTS, name);

export const STABLE_WEIGHT_TOTAL = Object.values(COMPONENTS)
  .filter((c) => c.stable)
  .reduce((s, c) => s + c.weight, 0);

const j = (v: unknown) => JSON.stringify(v);

/** Browser family and OS never change for one device; the major version only goes up. */
export interface UaFacts {
  readonly browser: string;
  readonly os: string;
  readonly major: number | null;
}

/**
 * Parsed User-Agents: an identify asks three times about one, and a site's
 * visitors share few (ua-parser-js's regular expressions were 4 % of the
 * server's CPU under identify load).
 */
const parsedUas = new LRUCache<string, UaFacts>({ max: 2_000 });

export function uaFacts(userAgent: string | undefined): UaFacts | null {
  if (!userAgent) return null;
  const known = parsedUas.get(userAgent);
  if (known) return known;
  const r = new UAParser(userAgent).getResult();
  const major = Number.parseInt(r.browser.major ?? '', 10);
  const facts = Object.freeze({
    browser: (r.browser.name ?? 'unknown').replace(/^(Headless|Mobile) /, ''),
    os: r.os.name ?? 'unknown',
    major: Number.isFinite(major) ? major : null,
  });
  parsedUas.set(userAgent, facts);
  return facts;
}

export function extractComponents(s: Signals): Components {
  const c: Components = {};
  const audioNoisy = (s.tampering?.audioNoise ?? 0) > 0;
  if (s.canvas && !s.canvas.isFarbled && (s.tampering?.canvasNoise ?? 0) === 0) c.canvas = s.canvas.hash;
  if (s.webgl) c.webgl = `${s.webgl.vendor}|${s.webgl.renderer}`;
  if (s.webglExtensions) c.webglCaps = `${s.webglExtensions.extensionsHash}|${s.webglExtensions.parametersHash}`;
  if (s.audio && !audioNoisy) c.audio = `${s.audio.hash}|${s.audio.sampleRate}`;
  if (s.fonts) c.fonts = s.fonts.installed.join(',');
  if (s.fontPreferences) c.fontPreferences = j(s.fontPreferences);
  if (s.screenResolution) c.screen = `${s.screenResolution.width}x${s.screenResolution.height}`;
  if (s.navigator || s.deviceMemory || s.architecture) {
    c.hardware = j([s.navigator?.hardwareConcurrency ?? null, s.deviceMemory?.gigabytes ?? null, s.architecture?.nanByte ?? null]);
  }
  if (s.navigator) c.platform = s.navigator.platform;
  if (s.timezone) c.timezone = s.timezone.name ?? `offset:${s.timezone.offset}`;
  if (s.math) c.math = s.math.hash;
  const ua = uaFacts(s.userAgent?.userAgent);
  if (ua) {
    c.browser = `${ua.browser}|${ua.os}`;
    if (ua.major !== null) c.uaVersion = String(ua.major);
  }
  if (s.vendor) c.vendor = `${s.vendor.vendor}|${s.vendor.flavors.join(',')}`;
  if (s.plugins) c.plugins = s.plugins.hash;
  if (s.touchSupport) c.touch = j(s.touchSupport);
  if (s.color) c.color = j(s.color);
  if (s.audioBaseLatency) c.audioLatency = String(s.audioBaseLatency.baseLatency);
  if (s.osCpu) c.osCpu = String(s.osCpu.oscpu);
  const media = [
    s.hdr?.high,
    s.contrast?.level,
    s.reducedMotion?.reduce,
    s.reducedTransparency?.reduce,
    s.forcedColors?.active,
    s.invertedColors?.inverted,
    s.monochrome?.bitsPerPixel,
  ];
  if (media.some((m) => m !== undefined)) c.mediaPrefs = j(media.map((m) => m ?? null));
  if (s.storage || s.cookiesEnabled || s.pdfViewerEnabled) {
    c.storageFlags = j([s.storage ?? null, s.cookiesEnabled?.enabled ?? null, s.pdfViewerEnabled?.enabled ?? null]);
  }
  if (s.applePay || s.privateClickMeasurement) c.safari = j([s.applePay?.state ?? null, s.privateClickMeasurement?.sourceId ?? null]);
  if (s.navigator) c.languages = s.navigator.languages.join(',');
  if (s.dateTimeLocale) c.locale = String(s.dateTimeLocale.locale);
  if (s.screenFrame) c.screenFrame = j(s.screenFrame);
  if (s.domBlockers) c.domBlockers = s.domBlockers.hidden.join(',');
  if (s.fontMetrics) c.fontMetrics = s.fontMetrics.hash;
  return c;
}

const sha = (s: string) => createHash('sha256').update(s).digest('base64url').slice(0, 32);

/** Share of the stable weight that was collected: low when many signals failed. */
export function coverage(c: Components): number {
  let w = 0;
  for (const [name, spec] of Object.entries(COMPONENTS)) if (spec.stable && c[name as ComponentName] !== undefined) w += spec.weight;
  return w / STABLE_WEIGHT_TOTAL;
}

/**
 * Exact key over the stable components present (absent ones count as
 * absent, so a sparse payload has a key of its own); null when nothing
 * stable was collected.
 */
export function exactKey(c: Components): string | null {
  if (coverage(c) === 0) return null;
  const parts = (Object.keys(COMPONENTS) as ComponentName[]).filter((n) => COMPONENTS[n].stable).map((n) => `${n}=${c[n] ?? '∅'}`);
  return sha(parts.join('\n'));
}

/**
 * The device group whose exact keys the rarity estimate counts together:
 * model-level facts (platform, browser and OS, GPU, screen, cores and
 * memory) that look-alikes share and that say nothing of the user.
 */
export function groupKey(c: Components): string {
  return sha(['platform', 'browser', 'webgl', 'screen', 'hardware'].map((n) => c[n as ComponentName] ?? '∅').join('\n'));
}

/**
 * The device model as far as a network index needs it (platform, browser
 * and OS, GPU, cores and memory): what identical devices share, stable
 * through docking, travel and browser updates. Indexed per network prefix
 * and AS, it finds the visitors of this kind that used this network, even
 * among hundreds of look-alikes.
 */
export function modelKey(c: Components): string {
  return sha(['platform', 'browser', 'webgl', 'hardware'].map((n) => c[n as ComponentName] ?? '∅').join('\n'));
}

/** A phone or tablet: touch-first (the agent's touch signal), whose fingerprints are far less diverse than desktops'. */
export function isMobile(c: Components): boolean {
  return /"maxTouchPoints":[1-9]/.test(c.touch ?? '') && /"touchEvent":true/.test(c.touch ?? '') && !/"maxTouchPoints":10/.test(c.touch ?? '');
}

/** WebKit (Safari, or any browser on iOS): its ITP deletes script-written storage after 7 days without a visit. */
export function isWebkit(c: Components): boolean {
  const b = c.browser ?? '';
  return b.startsWith('Safari|') || b.endsWith('|iOS');
}

/**
 * Partial keys find fuzzy-match candidates with point reads: each combines a
 * few components so a device still hits most of them after one or two drift.
 * Each holds the time zone or the screen so that its list of 10 most recent
 * visitors is not flooded by every device of a popular stack (the benchmark
 * lost recall with stack-only keys such as canvas+platform), and at least
 * two avoid the rendering hashes that browser updates change.
 */
const PARTIAL_KEYS: readonly (readonly ComponentName[])[] = [
  ['timezone', 'screen', 'hardware', 'platform'],
  ['fonts', 'timezone', 'screen', 'fontPreferences'],
  ['webgl', 'timezone', 'hardware', 'fontPreferences'],
  ['canvas', 'timezone', 'screen'],
  ['webgl', 'fonts', 'screen', 'safari', 'mediaPrefs'],
];

export function partialKeys(c: Components): string[] {
  const keys: string[] = [];
  PARTIAL_KEYS.forEach((names, i) => {
    if (names.every((n) => c[n] !== undefined)) keys.push(`${i}:${sha(names.map((n) => c[n]).join('\n'))}`);
  });
  return keys;
}
