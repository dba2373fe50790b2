// Browser signals: one zod schema per signal name. A request wraps each value
// as a SignalResult `{value, duration}`; the full event stores the value alone.
// The set mirrors FingerprintJS v5's 41 entropy sources (some merged) plus the
// risk inputs the verdicts need (automation, tampering, incognito, ...), and
// optional extras beyond them (EXTRA_SIGNAL_NAMES).
import { z } from 'zod';
import './common.js';

const hash = z.string().min(1).max(128);
const str = (max: number) => z.string().max(max);
const list = (items: number, chars: number) => z.array(z.string().max(chars)).max(items);
/** CSS media feature state; null when the browser does not know the feature. */
const mediaFlag = z.boolean().nullable();
const px = z.number().int().min(-100_000).max(100_000);
const size = z.number().int().min(0).max(100_000);
const width = z.number().min(0).max(100_000);

const pascal = (name: string) => name[0]!.toUpperCase() + name.slice(1);

/** Each signal value a component of its own (`CanvasSignal`, ...), so that generated clients get a named type for each. */
function titled<T extends Record<string, z.ZodTypeAny>>(values: T): T {
  return Object.fromEntries(Object.entries(values).map(([name, schema]) => [name, schema.openapi({ title: `${pascal(name)}Signal` })])) as T;
}

export const signalValueSchemas = titled({
  canvas: z
    .object({
      hash: hash.describe('Hash of the rendered text+geometry canvas image'),
      isFarbled: z
        .boolean()
        .describe(
          'True when the browser adds readback noise (two renders differ, or flat colours read back altered: Brave, Safari 17+ private, Firefox fingerprinting protection), so the hash is volatile',
        ),
    })
    .describe('2D canvas rendering. Stable per GPU/driver/font stack unless the browser farbles it.'),
  webgl: z
    .object({
      renderer: z.string().max(256).describe('UNMASKED_RENDERER_WEBGL, e.g. "ANGLE (NVIDIA, GeForce RTX 3060 ...)"'),
      vendor: z.string().max(256).describe('UNMASKED_VENDOR_WEBGL'),
    })
    .describe(
      'GPU identity as WebGL reports it. Stable until a driver or hardware change; software renderers (SwiftShader, llvmpipe) indicate headless or VMs.',
    ),
  audio: z
    .object({
      hash: hash.describe('Hash of an OfflineAudioContext oscillator+compressor render'),
      sampleRate: z.number().min(1).max(1_000_000).describe('AudioContext sample rate in Hz'),
    })
    .describe('Audio stack fingerprint. Stable per OS/CPU; some browsers add noise.'),
  navigator: z
    .object({
      hardwareConcurrency: z.number().int().nonnegative().max(4096).describe('Logical CPU cores'),
      platform: z.string().max(128).describe('navigator.platform'),
      languages: z.array(z.string().max(35)).max(32).describe('navigator.languages, most preferred first'),
    })
    .describe('Core navigator properties. Cores and platform are stable; languages drift when the user changes preferences.'),

  fonts: z
    .object({ installed: list(128, 64).describe('Probe fonts whose text width differs from every generic fallback, in probe order') })
    .describe('Installed fonts among a fixed probe list. Stable per OS install; changes when software adds fonts.'),
  fontPreferences: z
    .object({
      default: width.describe('The browser default font'),
      serif: width.describe('The generic serif family'),
      sans: width.describe('The generic sans-serif family'),
      mono: width.describe('The generic monospace family'),
      system: width.describe('The system UI font (system-ui)'),
      apple: width.describe('-apple-system (Apple platforms)'),
      min: width.describe('Text at font-size 1px: reveals the minimum font size setting'),
    })
    .describe(
      'Width in px of one text rendered with each generic family and at 1px (reveals the minimum font size). Stable per OS font config and browser settings; page zoom does not affect it.',
    ),
  domBlockers: z
    .object({
      hidden: list(32, 64).describe('Bait elements (by class or id) that a content blocker hid'),
      probed: z.number().int().min(0).max(1000).describe('How many bait elements were inserted'),
    })
    .describe('Ad/content blocker presence. Volatile: follows extension installs and per-site allowlisting.'),
  screenResolution: z
    .object({
      width: size.describe('Larger screen dimension in CSS px'),
      height: size.describe('Smaller screen dimension in CSS px'),
    })
    .describe('Screen size, orientation-independent. Stable per monitor; changes with display scaling or a new monitor.'),
  screenFrame: z
    .object({
      top: px.describe('Reserved at the top'),
      right: px.describe('Reserved at the right'),
      bottom: px.describe('Reserved at the bottom'),
      left: px.describe('Reserved at the left'),
    })
    .describe(
      'Space the OS reserves around the usable screen (taskbar, dock, menu bar) in CSS px, rounded to 10. Fairly stable; changes when the taskbar moves or auto-hides.',
    ),
  color: z
    .object({
      depth: z.number().int().min(0).max(64).describe('screen.colorDepth in bits'),
      gamut: z.enum(['srgb', 'p3', 'rec2020']).nullable().describe('Widest supported color-gamut media value; null when unknown'),
    })
    .describe('Display color capabilities. Stable per monitor.'),
  hdr: z
    .object({ high: mediaFlag.describe('(dynamic-range: high) matches') })
    .describe('HDR display. Stable per monitor, flips when the OS HDR toggle changes.'),
  contrast: z
    .object({ level: z.enum(['no-preference', 'more', 'less', 'custom']).nullable().describe('prefers-contrast value; null when unsupported') })
    .describe('Accessibility contrast preference. Stable user setting.'),
  reducedMotion: z
    .object({ reduce: mediaFlag.describe('prefers-reduced-motion: reduce matches') })
    .describe('Accessibility motion preference. Stable user setting.'),
  reducedTransparency: z
    .object({ reduce: mediaFlag.describe('prefers-reduced-transparency: reduce matches') })
    .describe('Accessibility transparency preference. Stable user setting.'),
  forcedColors: z
    .object({ active: mediaFlag.describe('forced-colors: active matches (e.g. Windows high contrast)') })
    .describe('Forced colors mode. Stable user setting.'),
  invertedColors: z
    .object({ inverted: mediaFlag.describe('inverted-colors: inverted matches') })
    .describe('OS colour inversion (mostly Safari). Stable user setting.'),
  monochrome: z
    .object({ bitsPerPixel: z.number().int().min(0).max(64).nullable().describe('monochrome media value; 0 on colour displays, null when unsupported') })
    .describe('Monochrome (e-ink/greyscale) display depth. Stable per display.'),
  timezone: z
    .object({
      name: str(64).nullable().describe('IANA zone from Intl, e.g. "Europe/Berlin"; null when unavailable'),
      offset: z.number().int().min(-1440).max(1440).describe('Standard (non-DST) UTC offset in minutes east of UTC, so it does not flip twice a year'),
    })
    .describe('Time zone. Stable unless the user travels or uses a VPN with a spoofed zone; a mismatch with IP geolocation hints at a VPN.'),
  plugins: z
    .object({
      count: z.number().int().min(0).max(1000).describe('navigator.plugins.length'),
      names: list(64, 128).describe('Plugin names in navigator order'),
      hash: hash.describe('Hash of names, descriptions and MIME types'),
    })
    .describe(
      'navigator.plugins. Stable per browser: modern Chromium reports five fixed PDF entries, so it mostly separates browsers; empty in some headless and privacy setups.',
    ),
  touchSupport: z
    .object({
      maxTouchPoints: z.number().int().min(0).max(256).describe('navigator.maxTouchPoints'),
      touchEvent: z.boolean().describe('document.createEvent("TouchEvent") succeeds'),
      touchStart: z.boolean().describe('ontouchstart exists on window'),
    })
    .describe('Touch capability. Stable per device; DevTools device emulation changes it.'),
  math: z
    .object({ hash: hash.describe('Hash of ~20 transcendental function results (acos, sinh, expm1, ...)') })
    .describe('Floating-point library fingerprint. Stable per JS engine build and CPU; changes only with browser updates.'),
  storage: z
    .object({
      localStorage: z.boolean().describe('localStorage can be written'),
      sessionStorage: z.boolean().describe('sessionStorage can be written'),
      indexedDB: z.boolean().describe('indexedDB is present'),
      openDatabase: z.boolean().describe('Legacy WebSQL present'),
    })
    .describe('Which storage APIs are usable. Stable; privacy modes and disabled cookies turn some off.'),
  cookiesEnabled: z
    .object({ enabled: z.boolean().describe('A first-party test cookie could be written and read back') })
    .describe('Cookie support. Stable user setting.'),
  pdfViewerEnabled: z
    .object({ enabled: z.boolean().nullable().describe('navigator.pdfViewerEnabled; null when unsupported') })
    .describe('Built-in PDF viewer. Stable browser setting.'),
  vendor: z
    .object({
      vendor: str(128).describe('navigator.vendor'),
      flavors: list(32, 64).describe('Browser-specific globals present (chrome, safari, __crWeb, yandex, ...), sorted'),
    })
    .describe('Browser vendor and flavour markers. Stable per browser brand.'),
  architecture: z
    .object({ nanByte: z.number().int().min(0).max(255).describe('High byte of the Float32 NaN produced by Infinity - Infinity: 255 on x86, 127 on ARM') })
    .describe('CPU architecture family. Stable per device.'),
  applePay: z
    .object({ state: z.enum(['enabled', 'disabled', 'unsupported', 'insecureContext', 'crossOrigin']).describe('ApplePaySession.canMakePayments() outcome') })
    .describe('Apple Pay availability (Safari only). Stable per device and wallet setup.'),
  privateClickMeasurement: z
    .object({ sourceId: str(64).nullable().describe('Default attributionSourceId of an anchor (Safari); null elsewhere') })
    .describe('Safari Private Click Measurement default. Stable per Safari version.'),
  webglExtensions: z
    .object({
      version: str(128).describe('VERSION'),
      shadingLanguageVersion: str(128).describe('SHADING_LANGUAGE_VERSION'),
      vendor: str(128).describe('Masked VENDOR (e.g. "WebKit")'),
      renderer: str(128).describe('Masked RENDERER (e.g. "WebKit WebGL")'),
      extensionCount: z.number().int().min(0).max(1000).describe('Number of supported extensions'),
      extensionsHash: hash.describe('Hash of the sorted supported extension names'),
      parametersHash: hash.describe('Hash of numeric limits, context attributes and shader precisions'),
    })
    .describe('WebGL capabilities beyond the GPU name. Stable per GPU, driver and browser version.'),
  audioBaseLatency: z
    .object({ baseLatency: z.number().min(0).max(10).nullable().describe('AudioContext.baseLatency in seconds; null when unsupported') })
    .describe('Audio output latency. Stable per audio device and OS mixer settings.'),
  dateTimeLocale: z
    .object({ locale: str(64).nullable().describe('Intl.DateTimeFormat().resolvedOptions().locale; null when Intl is missing') })
    .describe('Formatting locale. Stable user setting; usually follows the first language.'),
  osCpu: z
    .object({ oscpu: str(128).nullable().describe('navigator.oscpu (Firefox only); null elsewhere') })
    .describe('OS and CPU string Firefox exposes. Stable per OS install.'),
  userAgent: z
    .object({
      userAgent: str(1024).describe('navigator.userAgent'),
      brands: z
        .array(
          z
            .object({ brand: str(64).describe('Brand name, e.g. "Google Chrome"'), version: str(32).describe('Its full version') })
            .openapi({ title: 'UserAgentBrand', description: 'One User-Agent Client Hints brand.' }),
        )
        .max(16)
        .describe('UA-CH full-version brands, GREASE removed; empty without UA-CH'),
      mobile: z.boolean().nullable().describe('UA-CH mobile; null without UA-CH'),
      platform: str(64).nullable().describe('UA-CH platform, e.g. "Windows"; null without UA-CH'),
      platformVersion: str(64).nullable().describe('UA-CH platformVersion; null without UA-CH'),
      architecture: str(32).nullable().describe('UA-CH architecture, e.g. "x86"; null without UA-CH'),
      bitness: str(8).nullable().describe('UA-CH bitness, e.g. "64"; null without UA-CH'),
      model: str(128).nullable().describe('UA-CH model (mobile devices); null without UA-CH'),
    })
    .describe(
      'User-Agent string and Client Hints (null without UA-CH). Volatile: versions change with every browser update; compared with TLS for UA/TLS mismatch.',
    ),
  deviceMemory: z
    .object({ gigabytes: z.number().min(0).max(1024).nullable().describe('navigator.deviceMemory (bucketed by the browser); null when unsupported') })
    .describe('Approximate RAM. Stable per device.'),

  automation: z
    .object({
      webdriver: z.boolean().nullable().describe('navigator.webdriver; null when absent'),
      headlessUserAgent: z.boolean().describe('UA or appVersion names HeadlessChrome, PhantomJS, Electron or SlimerJS'),
      emptyPlugins: z.boolean().describe('Desktop Chromium without plugins (headless or PDF viewer disabled)'),
      emptyLanguages: z.boolean().describe('navigator.languages is empty'),
      zeroOuterSize: z.boolean().describe('Focused window with outerWidth and outerHeight 0'),
      notificationQuirk: z.boolean().describe('Notification.permission is "denied" while the Permissions API says "prompt"'),
      missingChromeObject: z.boolean().describe('UA claims Chrome but window.chrome is missing'),
      globals: list(32, 64).describe('Automation globals found on window/document (Selenium, PhantomJS, Nightmare, Playwright, chromedriver cdc_ keys, ...)'),
      documentAttributes: list(16, 64).describe('webdriver/selenium/driver attributes on <html>'),
    })
    .describe('Headless and automation markers. Stable per setup; any marker makes the headless verdict likely.'),
  tampering: z
    .object({
      lieCount: z.number().int().min(0).max(1000).describe('APIs whose function shape or descriptors are not native'),
      lies: list(64, 96).describe('Names of lied APIs, e.g. "Navigator.hardwareConcurrency"'),
      canvasNoise: z.number().int().min(0).max(1_000_000).describe('Pixels of a solid-colour canvas that read back altered'),
      audioNoise: z.number().int().min(0).max(1_000_000).describe('Samples of a known AudioBuffer that read back altered'),
    })
    .describe(
      'API tampering: native-function toString/descriptor checks and readback noise. Stable per extension/anti-detect setup; non-zero counts raise the tampering verdict.',
    ),
  devtools: z
    .object({
      open: z.boolean().describe('Heuristic: window chrome is much larger than the viewport, as with docked DevTools'),
      widthGap: z.number().int().min(-100_000).max(100_000).describe('outerWidth - innerWidth in CSS px'),
      heightGap: z.number().int().min(-100_000).max(100_000).describe('outerHeight - innerHeight in CSS px'),
    })
    .describe('DevTools open during collection. Volatile; page zoom and side panels can cause false positives.'),
  incognito: z
    .object({
      likely: z.boolean().describe('The agent judged the browsing context private'),
      quotaMb: z.number().min(0).max(1e9).nullable().describe('navigator.storage.estimate() quota in MB; private modes cap it near RAM size'),
      heapLimitMb: z.number().min(0).max(1e9).nullable().describe('performance.memory.jsHeapSizeLimit in MB (Chromium)'),
      opfsError: str(64).nullable().describe('Error name when the origin private file system is refused (Firefox/Safari private)'),
    })
    .describe('Private/incognito mode hints. Volatile by nature: the same device browses in both modes.'),
  privacyBrowser: z
    .object({
      name: str(64).nullable().describe('Brave, DuckDuckGo, "Firefox resistFingerprinting" (includes Tor/Mullvad Browser), ...; null when none'),
      markers: list(16, 64).describe('Evidence that led to the name'),
    })
    .describe('Privacy-hardened browser. Stable per browser; such browsers randomise or flatten other signals.'),
  virtualMachine: z
    .object({
      softwareRenderer: z.boolean().describe('WebGL renderer is a CPU rasteriser (SwiftShader, llvmpipe, Microsoft Basic Render Driver)'),
      virtualGpu: str(64).nullable().describe('Hypervisor GPU found in the renderer (VMware, VirtualBox, Parallels, QEMU/virtio, Hyper-V)'),
      markers: list(16, 64).describe('All hints, including odd screen/cores/memory combinations'),
    })
    .describe('Virtual machine hints. Stable per environment.'),
  deviceToken: z
    .object({
      token: z
        .string()
        .regex(/^[A-Za-z0-9_-]{16,64}$/)
        .nullable()
        .describe('Random first-party token the agent stores; null when no storage is usable'),
      storage: z
        .enum(['localStorage', 'cookie', 'indexedDB'])
        .nullable()
        .describe('Where the token was read from (for a new token, where it was first written)'),
      createdAt: z.number().int().nonnegative().nullable().describe('Unix ms when the token was created'),
    })
    .describe('Deterministic first-party device token. Stable until the user clears site data; strongest match evidence when present.'),

  // Optional extras beyond the spec's 41 (EXTRA_SIGNAL_NAMES): the server stores them and the related-visitors model
  // reads them; visitor identification does not weigh them.
  fontMetrics: z
    .object({
      hash: hash.describe(
        'Hash of the distinct advance widths of one sample text in the probe fonts present (system-ui, the OS UI font, and named OS fonts such as Arial, Segoe UI, Helvetica, Menlo, DejaVu Sans), measured with canvas measureText at 1024 px (1000 px for fonts of 1000 units per em) so that each is an exact number of font units in every engine; which name gave a width is left out, as engines resolve font aliases differently',
      ),
      fonts: z.number().int().min(0).max(64).describe('How many distinct widths the present probe fonts gave (an alias and its font count once)'),
      exact: z
        .number()
        .int()
        .min(0)
        .max(64)
        .describe('How many of them are an exact number of font units; the others are rounded to 8 px and may differ between engines'),
    })
    .describe(
      "Optional extra signal: metrics of the fonts the OS renders, from the font files and not from the engine, for telling one machine's browsers apart from other machines (related visitors; not used by visitor identification). Stable per OS install and font versions, and across browsers of one machine: measured equal in Chromium 156 (two profiles, one with an Edge user agent) and Firefox 153 on one Linux machine, and unchanged under device scale factor 2 and another viewport and screen; generic families other than system-ui, emoji and ink bounds (actualBoundingBox) differ between engines and are left out. Machines with the same OS, font versions and probe fonts give the same value. Cost (bench/README.md): about 20 ms of main-thread work in Chromium and 3 ms in Firefox per page, deferred behind the other collectors; the median collection time rose by about 5 ms in Chromium and not at all in Firefox.",
    ),
} as const);

/** Signals beyond the spec's 41: optional extras the agent adds (the related-visitors model reads them; identification does not). */
export const EXTRA_SIGNAL_NAMES = ['fontMetrics'] as const;

export type SignalName = keyof typeof signalValueSchemas;
export const SIGNAL_NAMES = Object.keys(signalValueSchemas) as SignalName[];
export type ExtraSignalName = (typeof EXTRA_SIGNAL_NAMES)[number];
/** The spec's 41 signals (SIGNAL_NAMES without the extras). */
export const SPEC_SIGNAL_NAMES = SIGNAL_NAMES.filter((n) => !(EXTRA_SIGNAL_NAMES as readonly string[]).includes(n)) as Exclude<SignalName, ExtraSignalName>[];
/** Value type of each signal, for clients that must not import zod at runtime. */
export type SignalValues = { [K in SignalName]: z.infer<(typeof signalValueSchemas)[K]> };
/** The spec's 41 signals all present, the extras optional: what a full collection in any browser holds. */
export type SpecSignalValues = Omit<SignalValues, ExtraSignalName> & Partial<Pick<SignalValues, ExtraSignalName>>;

const signalResult = <T extends z.ZodTypeAny>(name: string, value: T) =>
  z
    .object({
      value,
      duration: z.number().nonnegative().max(600_000).describe('Collection time in milliseconds'),
    })
    .openapi({
      title: `${pascal(name)}SignalResult`,
      description: `The ${name} signal as collected (SignalResult, spec 2.1): its value and how long it took.`,
    });

type Values = typeof signalValueSchemas;
type SignalResultSchema<T> = z.ZodObject<{ value: T extends z.ZodTypeAny ? T : never; duration: z.ZodNumber }>;
type SignalsShape = { [K in SignalName]: z.ZodOptional<SignalResultSchema<Values[K]>> };
type ClientShape = { [K in SignalName]: z.ZodOptional<Values[K]> };

const requestShape = Object.fromEntries(SIGNAL_NAMES.map((n) => [n, signalResult(n, signalValueSchemas[n]).optional()])) as unknown as SignalsShape;
const clientShape = Object.fromEntries(SIGNAL_NAMES.map((n) => [n, signalValueSchemas[n].optional()])) as unknown as ClientShape;

/**
 * Request `signals`: signal name → SignalResult. Any signal may be missing
 * (it failed to collect); names we do not know are ignored (stripped).
 */
export const SignalsRequestSchema = z.object(requestShape).openapi({
  title: 'Signals',
  description: 'Map of signal name to `{value, duration}`. Omit a signal that failed to collect; unknown names are ignored.',
});

/** Full-event `signals.client`: the same values without the `{value, duration}` wrapper. */
export const ClientSignalsSchema = z.object(clientShape).openapi({
  title: 'ClientSignals',
  description: 'Collected browser signals, each holding its value content directly.',
});
