// Font metrics: the advance width of one sample text in the OS's own fonts.
// Widths come from the font files (their advance widths and kerning, shaped
// by HarfBuzz in Blink and Gecko alike), so every browser of one machine
// measures the same, where the fonts installed (the `fonts` signal) differ
// by engine and rendering hashes differ by engine. Measured at a size where
// the width is an exact number of font units (1024 px for fonts of 2048 or
// 1024 units per em, 1000 px for 1000 or 2000), which rules out each
// engine's rounding of widths (Blink's 1/64 px steps, Gecko's 1/60) and, at
// such sizes, most hinting (a hinted Linux desktop is not measured).
// Only what agreed across Chromium and Firefox is kept (bench/agent/crossBrowser.ts):
// not the generic families other than system-ui (each engine has its own
// defaults), not emoji (Firefox may ship its own emoji font), not ink bounds,
// and not which probe name gave a width (aliases differ by engine).
import type { Collectors } from '../collector.js';
import { hashJson } from '../hash.js';
import { sleep } from '../util.js';

const SAMPLE = 'Hamburgefontsiv 0123456789 WQ@&fi';

/** The OS UI font, then fonts that ship with Windows, macOS, Linux desktops, Android and ChromeOS. */
export const METRIC_PROBES = [
  'system-ui',
  'Arial',
  'Times New Roman',
  'Courier New',
  'Segoe UI',
  'Segoe UI Variable Text',
  'Calibri',
  'Cambria',
  'Consolas',
  'Georgia',
  'Verdana',
  'Tahoma',
  'Trebuchet MS',
  'Bahnschrift',
  'Helvetica',
  'Helvetica Neue',
  'Menlo',
  'Monaco',
  'Geneva',
  'Lucida Grande',
  'Avenir Next',
  'DejaVu Sans',
  'DejaVu Serif',
  'DejaVu Sans Mono',
  'Liberation Sans',
  'Liberation Serif',
  'Liberation Mono',
  'Noto Sans',
  'Ubuntu',
  'Cantarell',
  'Roboto',
] as const;

/** Abandon (omit the signal) rather than hold the page longer than this; a partial list would not match another browser's. */
const BUDGET_MS = 150;

/** `w` is a whole number of quarter pixels (float noise aside). */
const quarters = (w: number): boolean => Math.abs(w * 4 - Math.round(w * 4)) < 1e-3;

/**
 * Each probe font present with its width token: `a<quarter px at 1024 px>`,
 * `b<quarter px at 1000 px>` when exact, `~<8 px at 1024 px>` otherwise.
 * Throws without a 2D canvas or over budget.
 */
export function measureFonts(): [string, string][] {
  const started = performance.now();
  const c = document.createElement('canvas').getContext('2d');
  if (!c) throw new Error('2d canvas unsupported');
  const width = (font: string): number => {
    c.font = font;
    return c.measureText(SAMPLE).width;
  };
  const measured: [string, string][] = [];
  for (const probe of METRIC_PROBES) {
    if (performance.now() - started > BUDGET_MS) throw new Error('font metrics over budget');
    const family = probe === 'system-ui' ? probe : `"${probe}"`;
    const at = (px: number) => width(`${px}px ${family}, monospace`);
    const w = at(1024);
    // A named font is present when the text measures alike whatever the fallback behind it.
    if (probe !== 'system-ui' && w !== width(`1024px ${family}, serif`)) continue;
    if (quarters(w) && quarters(at(512))) {
      measured.push([probe, `a${Math.round(w * 4)}`]);
      continue;
    }
    const k = at(1000);
    measured.push([probe, quarters(k) && quarters(at(500)) ? `b${Math.round(k * 4)}` : `~${Math.round(w / 8)}`]);
  }
  return measured;
}

export const fontMetricsCollectors: Collectors<'fontMetrics'> = {
  fontMetrics: {
    // Deferred a task: its synchronous work then runs while the other collectors' async work (audio rendering,
    // the blocker bait's wait) is under way instead of before it.
    async collect() {
      await sleep(0);
      // The distinct widths, not which name gave each: engines resolve aliases differently (on Linux, Chromium takes
      // fontconfig's Helvetica → Liberation Sans, Firefox does not), and an alias measures like its target.
      const widths = [...new Set(measureFonts().map(([, token]) => token))].sort();
      return { hash: hashJson(widths), fonts: widths.length, exact: widths.filter((token) => token[0] !== '~').length };
    },
  },
};
