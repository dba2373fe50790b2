// Fonts: a font is installed when text set in it measures differently from
// the same text in each generic fallback family.
import type { Collectors } from '../collector.js';
import { num, offscreenContainer } from '../util.js';

const BASES = ['monospace', 'sans-serif', 'serif'] as const;
const SAMPLE = 'mmmmmmmmmmlli WQ@&01fi';

/** Common per-OS fonts (Windows, macOS, Linux, Android, CJK, office suites). */
const PROBES = [
  'Arial Unicode MS',
  'Calibri',
  'Cambria',
  'Candara',
  'Consolas',
  'Constantia',
  'Corbel',
  'Segoe UI',
  'Segoe UI Emoji',
  'Segoe Print',
  'Segoe Script',
  'Franklin Gothic Medium',
  'Gabriola',
  'Ebrima',
  'Nirmala UI',
  'Leelawadee UI',
  'Malgun Gothic',
  'Microsoft YaHei',
  'MS Gothic',
  'MS Mincho',
  'SimSun',
  'Yu Gothic',
  'Meiryo',
  'Helvetica Neue',
  'Menlo',
  'Monaco',
  'Optima',
  'Futura',
  'Avenir',
  'Avenir Next',
  'Baskerville',
  'Didot',
  'American Typewriter',
  'Marker Felt',
  'Apple Chancery',
  'Chalkboard',
  'Hoefler Text',
  'Lucida Grande',
  'Geneva',
  'PingFang SC',
  'Hiragino Sans',
  'Roboto',
  'Noto Sans',
  'Noto Color Emoji',
  'Ubuntu',
  'DejaVu Sans',
  'Liberation Sans',
  'Cantarell',
  'Droid Sans',
  'Source Code Pro',
  'Fira Sans',
  'Open Sans',
  'Lato',
  'Comic Sans MS',
  'Impact',
  'Trebuchet MS',
  'Verdana',
  'Tahoma',
  'Georgia',
  'Palatino',
  'Book Antiqua',
  'Century Gothic',
  'Garamond',
  'Bookman Old Style',
  'Wingdings',
  'Symbol',
];

function span(parent: HTMLElement, style: string, text = SAMPLE): HTMLSpanElement {
  const el = document.createElement('span');
  el.style.cssText = `position:absolute;top:0;left:0;white-space:nowrap;font-style:normal;font-weight:normal;letter-spacing:normal;line-height:normal;${style}`;
  el.textContent = text;
  parent.appendChild(el);
  return el;
}

const size = (el: HTMLElement): string => `${el.offsetWidth}x${el.offsetHeight}`;

/** Text widths under each generic family preset; `min` is clamped by the minimum font size setting. */
const PRESETS = {
  default: 'font-size:48px',
  serif: 'font-size:48px;font-family:serif',
  sans: 'font-size:48px;font-family:sans-serif',
  mono: 'font-size:48px;font-family:monospace',
  system: 'font-size:48px;font-family:system-ui',
  apple: 'font:-apple-system-body;font-size:48px',
  min: 'font-size:1px',
} as const;

export const fontCollectors: Collectors<'fonts' | 'fontPreferences'> = {
  fonts: {
    collect() {
      const root = offscreenContainer();
      try {
        const base = BASES.map((b) => size(span(root, `font-size:72px;font-family:${b}`)));
        const probes = PROBES.map((font) => BASES.map((b) => span(root, `font-size:72px;font-family:'${font}',${b}`)));
        // Read after all writes so layout runs once.
        const installed = PROBES.filter((_, i) => probes[i]!.some((el, j) => size(el) !== base[j]));
        return { installed };
      } finally {
        root.remove();
      }
    },
  },
  fontPreferences: {
    collect() {
      const root = offscreenContainer();
      try {
        const spans = Object.entries(PRESETS).map(([key, style]) => [key, span(root, style)] as const);
        const widths = Object.fromEntries(spans.map(([key, el]) => [key, num(Math.round(el.getBoundingClientRect().width * 100) / 100, 0, 100_000)]));
        return widths as Record<keyof typeof PRESETS, number>;
      } finally {
        root.remove();
      }
    },
  },
};
