// Navigator properties: hardware, platform, browser brand and plugins.
import type { Collectors } from '../collector.js';
import { hashJson } from '../hash.js';
import { clip, clipList, clipOrNull, int, nav, num, win } from '../util.js';

/** Globals that only particular browsers or their embedders define. */
const FLAVOR_GLOBALS = [
  'chrome',
  'safari',
  'opr',
  'opera',
  '__crWeb',
  '__gCrWeb',
  'yandex',
  '__yb',
  '__ybro',
  '__firefox__',
  '__edgeTrackingPreventionStatistics',
  'webkit',
  'oprt',
  'samsungAr',
  'ucweb',
  'UCShellJava',
  'puffinDevice',
];

/** UA-CH "GREASE" brands are random decoys such as "Not;A=Brand". */
const isGrease = (brand: string): boolean => /not.a.brand/i.test(brand);

export const navigatorCollectors: Collectors<
  'navigator' | 'deviceMemory' | 'osCpu' | 'vendor' | 'userAgent' | 'plugins' | 'touchSupport' | 'pdfViewerEnabled'
> = {
  navigator: {
    collect: () => ({
      hardwareConcurrency: int(nav.hardwareConcurrency || 0, 0, 4096),
      platform: clip(String(nav.platform || ''), 128),
      languages: clipList(nav.languages || (nav.language ? [nav.language] : []), 32, 35),
    }),
  },
  deviceMemory: {
    collect: () => ({ gigabytes: typeof nav.deviceMemory === 'number' ? num(nav.deviceMemory, 0, 1024) : null }),
  },
  osCpu: {
    collect: () => ({ oscpu: clipOrNull(nav.oscpu, 128) }),
  },
  vendor: {
    collect: () => ({
      vendor: clip(String(nav.vendor || ''), 128),
      flavors: FLAVOR_GLOBALS.filter((name) => typeof (win as unknown as Record<string, unknown>)[name] === 'object').sort(),
    }),
  },
  userAgent: {
    async collect() {
      const data = nav.userAgentData;
      let high: Record<string, unknown> = {};
      if (data) {
        try {
          high = await data.getHighEntropyValues(['platformVersion', 'architecture', 'bitness', 'model', 'fullVersionList']);
        } catch {
          // The browser may refuse high-entropy hints; the low-entropy ones remain.
        }
      }
      const list = (Array.isArray(high.fullVersionList) ? high.fullVersionList : data?.brands || []) as Array<{ brand: string; version: string }>;
      return {
        userAgent: clip(nav.userAgent, 1024),
        brands: list
          .filter((b) => !isGrease(b.brand))
          .slice(0, 16)
          .map((b) => ({ brand: clip(String(b.brand), 64), version: clip(String(b.version), 32) })),
        mobile: data ? Boolean(data.mobile) : null,
        platform: data ? clip(String(data.platform), 64) : null,
        platformVersion: clipOrNull(high.platformVersion, 64),
        architecture: clipOrNull(high.architecture, 32),
        bitness: clipOrNull(high.bitness, 8),
        model: clipOrNull(high.model, 128),
      };
    },
  },
  plugins: {
    collect() {
      const plugins = Array.from(nav.plugins || []);
      const full = plugins.map((p) => [p.name, p.description, Array.from(p).map((m) => `${m.type}~${m.suffixes}`)]);
      return {
        count: Math.min(plugins.length, 1000),
        names: clipList(
          plugins.map((p) => p.name),
          64,
          128,
        ),
        hash: hashJson(full),
      };
    },
  },
  touchSupport: {
    collect() {
      let touchEvent = false;
      try {
        document.createEvent('TouchEvent');
        touchEvent = true;
      } catch {
        // Throws where touch events are unsupported.
      }
      return { maxTouchPoints: int(nav.maxTouchPoints || 0, 0, 256), touchEvent, touchStart: 'ontouchstart' in window };
    },
  },
  pdfViewerEnabled: {
    collect: () => ({ enabled: typeof nav.pdfViewerEnabled === 'boolean' ? nav.pdfViewerEnabled : null }),
  },
};
