// Small helpers that keep collected values inside the contract's bounds: one
// over-long string must not make the server reject the whole request.

export const clip = (s: string, max: number): string => (s.length > max ? s.slice(0, max) : s);

export const clipList = (list: readonly string[], items: number, chars: number): string[] => list.slice(0, items).map((s) => clip(s, chars));

/** Clip a string that may be missing; anything else becomes null. */
export const clipOrNull = (s: unknown, max: number): string | null => (typeof s === 'string' ? clip(s, max) : null);

/** Round and clamp; throws on NaN/Infinity so the signal is dropped rather than sent malformed. */
export function int(n: number, min: number, max: number): number {
  if (!Number.isFinite(n)) throw new Error('not a finite number');
  return Math.min(max, Math.max(min, Math.round(n)));
}

export function num(n: number, min: number, max: number): number {
  if (!Number.isFinite(n)) throw new Error('not a finite number');
  return Math.min(max, Math.max(min, n));
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Which value of a CSS media feature matches, or null when none does (the
 * browser does not know the feature).
 */
export function matchMediaValue<T extends string>(feature: string, values: readonly T[]): T | null {
  for (const v of values) if (matchMedia(`(${feature}: ${v})`).matches) return v;
  return null;
}

/** A mount point outside the viewport for elements that must be laid out but not seen. */
export function offscreenContainer(): HTMLDivElement {
  const div = document.createElement('div');
  div.setAttribute('aria-hidden', 'true');
  div.style.cssText = 'position:absolute;left:-10000px;top:0;visibility:hidden;pointer-events:none';
  (document.body || document.documentElement).appendChild(div);
  return div;
}

/** Globals this file reads that lib.dom does not declare (non-standard or prefixed). */
export type Win = Window &
  typeof globalThis & {
    webkitAudioContext?: typeof AudioContext;
    webkitOfflineAudioContext?: typeof OfflineAudioContext;
    openDatabase?: unknown;
    ApplePaySession?: { canMakePayments(): boolean };
  };
// Through globalThis so the module also loads outside a browser (unit tests).
export const win = globalThis as unknown as Win;

export type Nav = Navigator & {
  deviceMemory?: number;
  oscpu?: string;
  brave?: { isBrave(): Promise<boolean> };
  userAgentData?: {
    brands: Array<{ brand: string; version: string }>;
    mobile: boolean;
    platform: string;
    getHighEntropyValues(hints: string[]): Promise<Record<string, unknown>>;
  };
};
export const nav = win.navigator as Nav;
