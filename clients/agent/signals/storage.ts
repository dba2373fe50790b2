// Which storage mechanisms the page may use.
import type { Collectors } from '../collector.js';
import { win } from '../util.js';

/** Touching localStorage/sessionStorage throws when cookies are blocked. */
function usable(get: () => unknown): boolean {
  try {
    return !!get();
  } catch {
    return false;
  }
}

export const storageCollectors: Collectors<'storage' | 'cookiesEnabled'> = {
  storage: {
    collect: () => ({
      localStorage: usable(() => win.localStorage),
      sessionStorage: usable(() => win.sessionStorage),
      indexedDB: usable(() => win.indexedDB),
      openDatabase: typeof win.openDatabase === 'function',
    }),
  },
  cookiesEnabled: {
    collect() {
      // navigator.cookieEnabled lies in some embedded browsers; a round trip does not.
      const probe = '_did_probe=1';
      document.cookie = `${probe}; SameSite=Lax; Path=/`;
      const enabled = document.cookie.indexOf(probe) !== -1;
      document.cookie = `${probe}; SameSite=Lax; Path=/; Max-Age=0`;
      return { enabled };
    },
  },
};
