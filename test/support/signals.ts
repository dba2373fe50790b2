// Realistic identify payloads: one device's 41 signals, deterministic per seed,
// and the drift a real device shows between visits. The optional extras
// (EXTRA_SIGNAL_NAMES) are left out unless a test adds them.
import type { SpecSignalValues } from '../../contract/signals.js';

type Values = SpecSignalValues;

function rng(seed: number) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 2 ** 32;
  };
}

const hex = (r: () => number, n = 16) => Array.from({ length: n }, () => Math.floor(r() * 16).toString(16)).join('');
const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;

const GPUS = [
  'ANGLE (NVIDIA, NVIDIA GeForce RTX 3060 Direct3D11 vs_5_0 ps_5_0, D3D11)',
  'ANGLE (Intel, Intel(R) UHD Graphics 620 Direct3D11 vs_5_0 ps_5_0, D3D11)',
  'ANGLE (AMD, AMD Radeon RX 6600 Direct3D11 vs_5_0 ps_5_0, D3D11)',
  'Apple M1',
  'Apple M2 Pro',
];
const FONTS = [
  'Arial',
  'Calibri',
  'Cambria',
  'Consolas',
  'Segoe UI',
  'Helvetica Neue',
  'Menlo',
  'Roboto',
  'Ubuntu',
  'DejaVu Sans',
  'Noto Sans',
  'Georgia',
  'Verdana',
];
const ZONES = ['Europe/Berlin', 'America/New_York', 'Asia/Tokyo', 'Europe/London', 'America/Los_Angeles'];

export function deviceValues(seed: number, chromeMajor = 130): Values {
  const r = rng(seed);
  const fonts = FONTS.filter(() => r() > 0.4);
  return {
    canvas: { hash: hex(r), isFarbled: false },
    webgl: { renderer: pick(r, GPUS), vendor: 'Google Inc. (NVIDIA)' },
    audio: { hash: hex(r), sampleRate: pick(r, [44100, 48000]) },
    navigator: { hardwareConcurrency: pick(r, [4, 8, 12, 16]), platform: 'Win32', languages: ['en-US', 'en'] },
    fonts: { installed: fonts },
    fontPreferences: { default: 149, serif: 149, sans: 144, mono: 121, system: 147, apple: 149, min: 9 + Math.floor(r() * 3) },
    domBlockers: { hidden: [], probed: 12 },
    screenResolution: { width: pick(r, [1920, 2560, 1366, 1536]), height: pick(r, [1080, 1440, 768, 864]) },
    screenFrame: { top: 0, right: 0, bottom: 40, left: 0 },
    color: { depth: 24, gamut: 'srgb' },
    hdr: { high: false },
    contrast: { level: 'no-preference' },
    reducedMotion: { reduce: false },
    reducedTransparency: { reduce: false },
    forcedColors: { active: false },
    invertedColors: { inverted: null },
    monochrome: { bitsPerPixel: 0 },
    timezone: { name: pick(r, ZONES), offset: 60 },
    plugins: { count: 5, names: ['PDF Viewer', 'Chrome PDF Viewer'], hash: hex(r) },
    touchSupport: { maxTouchPoints: 0, touchEvent: false, touchStart: false },
    math: { hash: hex(r) },
    storage: { localStorage: true, sessionStorage: true, indexedDB: true, openDatabase: false },
    cookiesEnabled: { enabled: true },
    pdfViewerEnabled: { enabled: true },
    vendor: { vendor: 'Google Inc.', flavors: ['chrome'] },
    architecture: { nanByte: 255 },
    applePay: { state: 'unsupported' },
    privateClickMeasurement: { sourceId: null },
    webglExtensions: {
      version: 'WebGL 1.0 (OpenGL ES 2.0 Chromium)',
      shadingLanguageVersion: 'WebGL GLSL ES 1.0',
      vendor: 'WebKit',
      renderer: 'WebKit WebGL',
      extensionCount: 36,
      extensionsHash: hex(r),
      parametersHash: hex(r),
    },
    audioBaseLatency: { baseLatency: 0.01 },
    dateTimeLocale: { locale: 'en-US' },
    osCpu: { oscpu: null },
    userAgent: {
      userAgent: `Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${chromeMajor}.0.0.0 Safari/537.36`,
      brands: [{ brand: 'Google Chrome', version: `${chromeMajor}.0.6723.70` }],
      mobile: false,
      platform: 'Windows',
      platformVersion: '15.0.0',
      architecture: 'x86',
      bitness: '64',
      model: '',
    },
    deviceMemory: { gigabytes: 8 },
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
    devtools: { open: false, widthGap: 16, heightGap: 87 },
    incognito: { likely: false, quotaMb: 120000, heapLimitMb: 4096, opfsError: null },
    privacyBrowser: { name: null, markers: [] },
    virtualMachine: { softwareRenderer: false, virtualGpu: null, markers: [] },
    deviceToken: { token: `tok_${hex(r, 24)}`, storage: 'localStorage', createdAt: 1_700_000_000_000 },
  };
}

let tokensIssued = 0;

/** The same device with a device token of its own, new to the service (as after storage was cleared, or on another device). */
export function withNewToken(values: Values): Values {
  return { ...values, deviceToken: { token: `test_token_${++tokensIssued}_${process.pid}_${'x'.repeat(12)}`, storage: 'localStorage', createdAt: 1 } };
}

/** Wraps values as request SignalResults. */
export function wrap(values: Partial<Values>): Record<string, { value: unknown; duration: number }> {
  return Object.fromEntries(Object.entries(values).map(([k, v]) => [k, { value: v, duration: 3 }]));
}

export function identifyBody(values: Partial<Values>, extra: Record<string, unknown> = {}) {
  return { signals: wrap(values), timestamp: 1_768_478_400_000, url: 'https://shop.example.com/checkout', ...extra };
}

/**
 * The same device a few weeks on, as most devices drift: a browser update
 * (a new major that renders the canvas differently) and a moved taskbar;
 * storage kept. A user adding a language as well at the same time is rare
 * enough that a device on a shared network then looks like an office
 * colleague's of the same image.
 */
export function drifted(v: Values): Values {
  const major = Number(/Chrome\/(\d+)/.exec(v.userAgent.userAgent)![1]) + 1;
  return {
    ...v,
    canvas: { ...v.canvas, hash: v.canvas.hash.split('').reverse().join('') },
    userAgent: { ...v.userAgent, userAgent: v.userAgent.userAgent.replace(/Chrome\/\d+/, `Chrome/${major}`) },
    screenFrame: { ...v.screenFrame, bottom: 48 },
    devtools: { ...v.devtools, open: true },
  };
}

/** The same machine in Firefox: what the OS and hardware fix is the same, what the engine decides is its own. */
/** The GPU as Firefox names it: its family's representative, after Firefox's own table (SanitizeRenderer.cpp). */
function firefoxGpu(renderer: string): string {
  if (/NVIDIA/.test(renderer)) return 'ANGLE (NVIDIA, NVIDIA GeForce GTX 980 Direct3D11 vs_5_0 ps_5_0), or similar';
  if (/Intel/.test(renderer)) return 'ANGLE (Intel, Intel(R) HD Graphics 400 Direct3D11 vs_5_0 ps_5_0), or similar';
  if (/AMD/.test(renderer)) return 'ANGLE (AMD, Radeon R9 200 Series Direct3D11 vs_5_0 ps_5_0), or similar';
  return 'Apple M1, or similar';
}

export function inFirefox(v: Values): Values {
  // Firefox has no navigator.deviceMemory.
  const { deviceMemory: _, ...rest } = v;
  return withNewToken({
    ...(rest as Values),
    canvas: { hash: `ff${v.canvas.hash.slice(2)}`, isFarbled: false },
    // Firefox names a representative of the GPU's family (webgl.sanitize-unmasked-renderer).
    webgl: { vendor: 'Mozilla', renderer: firefoxGpu(v.webgl.renderer) },
    audio: { ...v.audio, hash: `ff${v.audio.hash.slice(2)}` },
    math: { hash: `ff${v.math.hash.slice(2)}` },
    plugins: { count: 5, names: ['PDF Viewer'], hash: 'ff00' },
    vendor: { vendor: '', flavors: [] },
    webglExtensions: { ...v.webglExtensions, extensionsHash: 'ff01', parametersHash: 'ff02' },
    fontPreferences: { ...v.fontPreferences, default: 147 },
    userAgent: {
      ...v.userAgent,
      userAgent: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:144.0) Gecko/20100101 Firefox/144.0',
      brands: [],
    },
  });
}

/** The same machine in Edge: Chromium renders as Chrome does; the browser and its settings are its own. */
export function inEdge(v: Values): Values {
  return withNewToken({
    ...v,
    plugins: { count: 5, names: ['PDF Viewer', 'Microsoft Edge PDF Viewer'], hash: 'ed00' },
    webglExtensions: { ...v.webglExtensions, extensionsHash: 'ed01' },
    fontPreferences: { ...v.fontPreferences, default: 150 },
    navigator: { ...v.navigator, languages: ['en-GB', 'en'] },
    userAgent: {
      ...v.userAgent,
      userAgent: `${v.userAgent.userAgent} Edg/130.0.2849.56`,
      brands: [{ brand: 'Microsoft Edge', version: '130.0.2849.56' }],
    },
  });
}

export function withoutToken(v: Values): Values {
  return { ...v, deviceToken: { token: null, storage: null, createdAt: null } };
}
