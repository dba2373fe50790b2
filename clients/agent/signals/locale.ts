// Time zone and formatting locale.
import type { Collectors } from '../collector.js';
import { clipOrNull } from '../util.js';

function resolved(): Intl.ResolvedDateTimeFormatOptions | null {
  return typeof Intl === 'object' && Intl.DateTimeFormat ? new Intl.DateTimeFormat().resolvedOptions() : null;
}

export const localeCollectors: Collectors<'timezone' | 'dateTimeLocale'> = {
  timezone: {
    collect() {
      // getTimezoneOffset is minutes *west* of UTC and shrinks during DST, so
      // the larger of January and July is the standard offset.
      const year = new Date().getFullYear();
      const west = Math.max(new Date(year, 0, 1).getTimezoneOffset(), new Date(year, 6, 1).getTimezoneOffset());
      return { name: clipOrNull(resolved()?.timeZone, 64), offset: -west || 0 };
    },
  },
  dateTimeLocale: {
    collect: () => ({ locale: clipOrNull(resolved()?.locale, 64) }),
  },
};
