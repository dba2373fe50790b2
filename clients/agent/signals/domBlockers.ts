// Content blockers: insert bait elements whose class names generic cosmetic
// filter lists hide, then see which ones disappeared.
import type { Collectors } from '../collector.js';
import { offscreenContainer, sleep } from '../util.js';

const BAITS = [
  '.adsbox',
  '.ad-banner',
  '.adsbygoogle',
  '.ad-slot',
  '.advertisement',
  '.banner-ad',
  '.pub_300x250',
  '.text-ad',
  '.textAd',
  '.sponsored-ad',
  '#ad_banner',
  '#adcontainer',
  '#carbonads',
  '#google_ads_frame',
];

export const domBlockerCollectors: Collectors<'domBlockers'> = {
  domBlockers: {
    // Blockers apply generic cosmetic rules asynchronously after insertion.
    timeout: 1500,
    async collect() {
      const root = offscreenContainer();
      // Bait must be laid out normally for blockers to act on it; the container only moves it off screen.
      root.style.visibility = 'visible';
      try {
        const els = BAITS.map((bait) => {
          const el = document.createElement('div');
          if (bait[0] === '#') el.id = bait.slice(1);
          else el.className = bait.slice(1);
          el.style.cssText = 'width:1px;height:1px';
          el.textContent = '\u00a0';
          root.appendChild(el);
          return el;
        });
        await sleep(120);
        const hidden = BAITS.filter((_, i) => {
          const el = els[i]!;
          const style = getComputedStyle(el);
          return !el.isConnected || el.offsetParent === null || style.display === 'none' || style.visibility === 'hidden';
        });
        return { hidden, probed: BAITS.length };
      } finally {
        root.remove();
      }
    },
  },
};
