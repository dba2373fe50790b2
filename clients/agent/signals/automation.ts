// Headless browser and automation-framework markers (ideas from BotD).
import type { Collectors } from '../collector.js';
import { clipList, nav, win } from '../util.js';

/** Globals automation tools leave on window or document. */
const AUTOMATION_GLOBALS = [
  '_phantom',
  'callPhantom',
  '__nightmare',
  '_selenium',
  'callSelenium',
  '_Selenium_IDE_Recorder',
  '__webdriver_evaluate',
  '__selenium_evaluate',
  '__webdriver_script_function',
  '__webdriver_script_func',
  '__webdriver_script_fn',
  '__fxdriver_evaluate',
  '__driver_unwrapped',
  '__webdriver_unwrapped',
  '__driver_evaluate',
  '__selenium_unwrapped',
  '__fxdriver_unwrapped',
  '__lastWatirAlert',
  '__lastWatirConfirm',
  '__lastWatirPrompt',
  'domAutomation',
  'domAutomationController',
  '__playwright__binding__',
  '__pwInitScripts',
  'wdioElectron',
  'awesomium',
  'CefSharp',
  'geb',
  'fmget_targets',
];

/** chromedriver injects randomised keys starting with cdc_ / $cdc_ (and $wdc_ in some builds). */
const DRIVER_KEY = /^\$?(cdc|wdc)_/;

async function notificationQuirk(): Promise<boolean> {
  if (typeof Notification === 'undefined' || !nav.permissions) return false;
  try {
    const status = await nav.permissions.query({ name: 'notifications' });
    return Notification.permission === 'denied' && status.state === 'prompt';
  } catch {
    return false;
  }
}

function ownKeys(target: object): string[] {
  try {
    return Object.getOwnPropertyNames(target);
  } catch {
    return [];
  }
}

export const automationCollectors: Collectors<'automation'> = {
  automation: {
    async collect() {
      const ua = nav.userAgent;
      const bag = win as unknown as Record<string, unknown>;
      const doc = document as unknown as Record<string, unknown>;
      const desktopChromium = /Chrome\/\d/.test(ua) && !/Android|Mobile/.test(ua);
      const globals = AUTOMATION_GLOBALS.filter((name) => bag[name] !== undefined || doc[name] !== undefined);
      for (const key of [...ownKeys(win), ...ownKeys(document)]) if (DRIVER_KEY.test(key)) globals.push(key);
      return {
        webdriver: typeof nav.webdriver === 'boolean' ? nav.webdriver : null,
        headlessUserAgent: /HeadlessChrome|PhantomJS|Electron|SlimerJS/i.test(`${ua} ${nav.appVersion}`),
        emptyPlugins: desktopChromium && (nav.plugins?.length ?? 0) === 0,
        emptyLanguages: (nav.languages?.length ?? 0) === 0,
        zeroOuterSize: document.hasFocus() && win.outerWidth === 0 && win.outerHeight === 0,
        notificationQuirk: await notificationQuirk(),
        // Android WebView legitimately lacks window.chrome, hence desktop only.
        missingChromeObject: desktopChromium && bag.chrome === undefined,
        globals: clipList(globals, 32, 64),
        documentAttributes: clipList(
          document.documentElement.getAttributeNames().filter((n) => /selenium|webdriver|driver/i.test(n)),
          16,
          64,
        ),
      };
    },
  },
};
