// Screen geometry and CSS media preferences (display and accessibility).
import type { Collectors } from '../collector.js';
import { int, matchMediaValue } from '../util.js';

const px = (n: number): number => int(n, -100_000, 100_000);
const round10 = (n: number): number => px(Math.round(n / 10) * 10);

/** true/false when the feature is known and (not) at `on`; null when the browser does not know it. */
function mediaFlag(feature: string, on: string, off: string): boolean | null {
  const v = matchMediaValue(feature, [on, off]);
  return v === null ? null : v === on;
}

function monochromeBits(): number | null {
  if (!matchMedia('(min-monochrome: 0)').matches) return null;
  for (let bits = 0; bits <= 64; bits++) if (matchMedia(`(max-monochrome: ${bits})`).matches) return bits;
  return null;
}

export const displayCollectors: Collectors<
  'screenResolution' | 'screenFrame' | 'color' | 'hdr' | 'contrast' | 'reducedMotion' | 'reducedTransparency' | 'forcedColors' | 'invertedColors' | 'monochrome'
> = {
  screenResolution: {
    collect() {
      // Sorted so a rotated phone or tablet reports the same pair.
      const [a, b] = [screen.width, screen.height].map((n) => int(n, 0, 100_000)).sort((x, y) => y - x);
      return { width: a!, height: b! };
    },
  },
  screenFrame: {
    collect() {
      const s = screen as Screen & { availTop?: number; availLeft?: number };
      const top = s.availTop || 0;
      const left = s.availLeft || 0;
      return {
        top: round10(top),
        right: round10(s.width - s.availWidth - left),
        bottom: round10(s.height - s.availHeight - top),
        left: round10(left),
      };
    },
  },
  color: {
    collect: () => ({
      depth: int(screen.colorDepth, 0, 64),
      // Widest first: a p3 display also matches srgb.
      gamut: matchMediaValue('color-gamut', ['rec2020', 'p3', 'srgb'] as const),
    }),
  },
  hdr: { collect: () => ({ high: mediaFlag('dynamic-range', 'high', 'standard') }) },
  contrast: {
    collect: () => ({ level: matchMediaValue('prefers-contrast', ['no-preference', 'more', 'less', 'custom'] as const) }),
  },
  reducedMotion: { collect: () => ({ reduce: mediaFlag('prefers-reduced-motion', 'reduce', 'no-preference') }) },
  reducedTransparency: { collect: () => ({ reduce: mediaFlag('prefers-reduced-transparency', 'reduce', 'no-preference') }) },
  forcedColors: { collect: () => ({ active: mediaFlag('forced-colors', 'active', 'none') }) },
  invertedColors: { collect: () => ({ inverted: mediaFlag('inverted-colors', 'inverted', 'none') }) },
  monochrome: { collect: () => ({ bitsPerPixel: monochromeBits() }) },
};
