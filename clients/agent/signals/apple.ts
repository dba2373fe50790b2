// Safari-only features; other browsers report them as unsupported/null.
import type { Collectors } from '../collector.js';
import { clipOrNull, win } from '../util.js';

export const appleCollectors: Collectors<'applePay' | 'privateClickMeasurement'> = {
  applePay: {
    collect() {
      const session = win.ApplePaySession;
      if (!session || typeof session.canMakePayments !== 'function') return { state: 'unsupported' };
      if (!win.isSecureContext) return { state: 'insecureContext' };
      try {
        return { state: session.canMakePayments() ? 'enabled' : 'disabled' };
      } catch (e) {
        // Safari refuses in a frame whose origin differs from the top page.
        if (win !== win.top) return { state: 'crossOrigin' };
        throw e;
      }
    },
  },
  privateClickMeasurement: {
    collect() {
      const a = document.createElement('a') as HTMLAnchorElement & { attributionSourceId?: unknown; attributionsourceid?: unknown };
      const id = a.attributionSourceId ?? a.attributionsourceid;
      return {
        sourceId: id === undefined || id === null ? null : clipOrNull(typeof id === 'string' || typeof id === 'number' ? String(id) : JSON.stringify(id), 64),
      };
    },
  },
};
