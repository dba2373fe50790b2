// API tampering ("lies", idea from CreepJS): anti-detect browsers and
// fingerprint-spoofing extensions replace native getters and methods with
// JavaScript. Natives have a fixed shape that replacements rarely reproduce.
import type { Collectors } from '../collector.js';
import { clipList } from '../util.js';
import { canvasNoise } from './canvas.js';

type Target = [label: string, proto: () => object | undefined, keys: string[], instance?: () => object];

const g = globalThis as unknown as Record<string, { prototype?: object } | undefined>;
const proto = (name: string) => () => g[name]?.prototype;

/** APIs fingerprinting reads and spoofers therefore patch. */
const TARGETS: Target[] = [
  ['Function', proto('Function'), ['toString']],
  [
    'Navigator',
    proto('Navigator'),
    ['userAgent', 'appVersion', 'platform', 'hardwareConcurrency', 'deviceMemory', 'language', 'languages', 'webdriver', 'plugins', 'vendor', 'maxTouchPoints'],
    () => navigator,
  ],
  ['Screen', proto('Screen'), ['width', 'height', 'availWidth', 'availHeight', 'colorDepth', 'pixelDepth'], () => screen],
  ['HTMLCanvasElement', proto('HTMLCanvasElement'), ['toDataURL', 'toBlob', 'getContext']],
  ['CanvasRenderingContext2D', proto('CanvasRenderingContext2D'), ['getImageData', 'measureText', 'fillText', 'isPointInPath']],
  ['WebGLRenderingContext', proto('WebGLRenderingContext'), ['getParameter', 'getExtension', 'getSupportedExtensions', 'readPixels']],
  ['WebGL2RenderingContext', proto('WebGL2RenderingContext'), ['getParameter', 'getExtension', 'readPixels']],
  ['AudioBuffer', proto('AudioBuffer'), ['getChannelData', 'copyFromChannel']],
  ['AnalyserNode', proto('AnalyserNode'), ['getFloatFrequencyData', 'getByteFrequencyData']],
  ['OfflineAudioContext', proto('OfflineAudioContext'), ['startRendering']],
  ['Date', proto('Date'), ['getTimezoneOffset']],
  ['Intl.DateTimeFormat', () => Intl.DateTimeFormat.prototype, ['resolvedOptions']],
  ['Element', proto('Element'), ['getBoundingClientRect', 'getClientRects']],
  ['HTMLElement', proto('HTMLElement'), ['offsetWidth', 'offsetHeight']],
  ['Permissions', proto('Permissions'), ['query']],
  ['MediaDevices', proto('MediaDevices'), ['enumerateDevices']],
];

// Taken when the agent loads, before a page's script can replace it.
// eslint-disable-next-line @typescript-eslint/unbound-method -- called with .call() on each function examined
const fnToString = Function.prototype.toString;
const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** True when `fn` does not look like a built-in function named `key`. */
type Callable = (...args: never[]) => unknown;
const isCallable = (v: unknown): v is Callable => typeof v === 'function';

function isLie(fn: Callable, key: string, isGetter: boolean): boolean {
  // Native source text is "function NAME() { [native code] }"; engines differ
  // in whitespace and some omit the "get " prefix on getters.
  const source = new RegExp(`^function (get )?${escape(key)}\\(\\) \\{\\s*\\[native code\\]\\s*\\}$`);
  const expectedName = isGetter ? `get ${key}` : key;
  let text: string;
  try {
    text = fnToString.call(fn);
  } catch {
    return true;
  }
  if (!source.test(text)) return true; // replaced source, or a Proxy (which prints without a name)
  if (fn.name !== expectedName && fn.name !== key) return true;
  if ('prototype' in fn) return true; // built-in methods are not constructors
  const own = Object.getOwnPropertyNames(fn).sort().join();
  if (own !== 'length,name') return true;
  try {
    new (fn as unknown as new () => unknown)();
    return true;
  } catch (e) {
    if (!(e instanceof TypeError)) return true;
  }
  return false;
}

function findLies(): string[] {
  const lies: string[] = [];
  for (const [label, getProto, keys, getInstance] of TARGETS) {
    const p = getProto();
    if (!p) continue;
    for (const key of keys) {
      const d = Object.getOwnPropertyDescriptor(p, key);
      if (!d) continue;
      // Only read and printed, never called detached.
      // eslint-disable-next-line @typescript-eslint/unbound-method
      const fn: unknown = d.get ?? d.value;
      if (!isCallable(fn)) continue;
      let lied = isLie(fn, key, !!d.get);
      if (d.get && !lied) {
        // A native getter called on the prototype itself throws "Illegal invocation".
        try {
          void (p as Record<string, unknown>)[key];
          lied = true;
        } catch (e) {
          lied = !(e instanceof TypeError);
        }
      }
      // Spoofers often shadow the prototype getter with an own property on the instance.
      if (!lied && getInstance && Object.getOwnPropertyDescriptor(getInstance(), key)) lied = true;
      if (lied) lies.push(`${label}.${key}`);
    }
  }
  return lies;
}

/** Samples of a known AudioBuffer that read back different from what was written. */
function audioNoise(): number {
  const length = 256;
  let buffer: AudioBuffer;
  try {
    buffer = new AudioBuffer({ length, sampleRate: 44100 });
  } catch {
    return 0; // No constructible AudioBuffer (Safari < 14.1): nothing to compare.
  }
  const written = new Float32Array(length).map((_, i) => ((i % 32) - 16) / 16);
  buffer.copyToChannel(written, 0);
  const read = buffer.getChannelData(0);
  let altered = 0;
  for (let i = 0; i < length; i++) if (read[i] !== written[i]) altered++;
  return altered;
}

export const tamperingCollectors: Collectors<'tampering'> = {
  tampering: {
    collect() {
      const lies = findLies();
      return { lieCount: lies.length, lies: clipList(lies, 64, 96), canvasNoise: canvasNoise(), audioNoise: audioNoise() };
    },
  },
};
