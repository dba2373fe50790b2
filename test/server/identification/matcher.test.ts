// The matcher's rules (server/identification/matcher.ts), one per case: the
// changes one device cannot make, how much of two component sets agrees and
// how much of them was compared at all, which kind of change a difference
// is, and when a device token is believed.
import { describe, expect, it } from 'vitest';
import { coverage, STABLE_WEIGHT_TOTAL, type Components } from '../../../server/identification/components.js';
import { similarity, TOKEN_CONSISTENCY, TOKEN_OVERLAP, tokenCheck } from '../../../server/identification/matcher.js';

/** A desktop with every component, in the shapes components.ts writes them. */
const desk: Components = {
  canvas: 'c0ffee',
  webgl: 'Google Inc. (NVIDIA)|ANGLE (NVIDIA, NVIDIA GeForce RTX 3060 Direct3D11)',
  webglCaps: 'e1|p1',
  audio: 'a1|48000',
  fonts: 'Arial,Calibri,Consolas,Segoe UI',
  fontPreferences: '{"default":149,"min":9}',
  screen: '1920x1080',
  hardware: '[8,16,null]',
  platform: 'Win32',
  timezone: 'Europe/Berlin',
  math: 'm1',
  browser: 'Chrome|Windows',
  vendor: 'Google Inc.|',
  plugins: 'pl1',
  touch: '{"maxTouchPoints":0,"touchEvent":false}',
  color: '{"depth":24}',
  audioLatency: '0.01',
  osCpu: 'undefined',
  mediaPrefs: '[false,"no-preference"]',
  storageFlags: '[true,true,true]',
  safari: '[null,null]',
  languages: 'en-US,en',
  locale: 'en-US',
  uaVersion: '130',
  screenFrame: '{"bottom":40}',
  domBlockers: '',
};

const noChange = { render: 0, screen: 0, volatile: 0, timezone: 0, fonts: 0, language: 0, languageAdded: 0, hardware: 0, version: 0, other: 0 };

describe('impossible changes', () => {
  it('forbid another browser family, another platform and an older browser version', () => {
    expect(similarity(desk, desk).forbidden).toBe(false);
    expect(similarity(desk, { ...desk, browser: 'Firefox|Windows' }).forbidden).toBe(true);
    expect(similarity(desk, { ...desk, platform: 'MacIntel' }).forbidden).toBe(true);
    expect(similarity(desk, { ...desk, uaVersion: '129' }).forbidden).toBe(true);
    // Versions compare as numbers: 99 → 100 is an update, not a downgrade.
    expect(similarity({ ...desk, uaVersion: '99' }, { ...desk, uaVersion: '100' }).forbidden).toBe(false);
    expect(similarity(desk, { ...desk, uaVersion: '131' }).forbidden).toBe(false);
  });

  it('need both sides to have collected the component', () => {
    const { browser: _b, platform: _p, uaVersion: _v, ...bare } = desk;
    expect(similarity(bare, { ...desk, browser: 'Firefox|Linux', platform: 'Linux x86_64', uaVersion: '1' }).forbidden).toBe(false);
    expect(similarity({ ...desk, browser: 'Firefox|Linux', platform: 'Linux x86_64', uaVersion: '999' }, bare).forbidden).toBe(false);
  });

  it('are not kinds of change: the browser and platform weigh in the score only', () => {
    const s = similarity(desk, { ...desk, browser: 'Firefox|Windows', platform: 'MacIntel' });
    expect(s.changed).toEqual(noChange);
    expect(s.score).toBeLessThan(1);
  });
});

describe('similarity', () => {
  it('is 1 for the same components and 0 when nothing was compared', () => {
    expect(similarity(desk, desk)).toEqual({ score: 1, overlap: 1, forbidden: false, changed: noChange });
    expect(similarity({}, desk)).toEqual({ score: 0, overlap: 0, forbidden: false, changed: noChange });
    expect(similarity({ languages: 'en-US' }, { screen: '1920x1080' }).score).toBe(0);
  });

  it('weighs a differing component by its weight, all or nothing unless it is compared by its parts', () => {
    // Screen (weight 6) and time zone (8) agree, the canvas (1) does not: 14 of 15.
    expect(similarity({ screen: 'a', timezone: 'b', canvas: 'x' }, { screen: 'a', timezone: 'b', canvas: 'y' }).score).toBe(14 / 15);
    // A hardware change shares parts of its text with the old value, and still counts as wholly different.
    expect(similarity({ hardware: '[8,16,null]', timezone: 'b' }, { hardware: '[8,8,null]', timezone: 'b' }).score).toBe(8 / 14);
  });

  it('compares fonts, the GPU and languages by the share of their parts that agree', () => {
    // One font of five swapped: 5 parts shared of 7 ("Segoe UI" is two), on the font weight (8) of 14 with the screen (6).
    const fonts = similarity(
      { fonts: 'Arial,Calibri,Consolas,Segoe UI,Verdana', screen: 's' },
      { fonts: 'Arial,Calibri,Consolas,Segoe UI,Georgia', screen: 's' },
    );
    expect(fonts.score).toBeCloseTo((6 + 8 * (5 / 7)) / 14, 12);
    // The GPU string splits at spaces, bars, commas and parentheses: a driver update changes one part of eight.
    const gpu = similarity(
      { webgl: 'Google Inc. (NVIDIA)|ANGLE (NVIDIA, GeForce RTX 3060 D3D11)' },
      { webgl: 'Google Inc. (NVIDIA)|ANGLE (NVIDIA, GeForce RTX 3060 D3D12)' },
    );
    // Parts: Google, Inc., NVIDIA, ANGLE, GeForce, RTX, 3060 shared (7), D3D11 and D3D12 not: 7 of 9.
    expect(gpu.score).toBeCloseTo(7 / 9, 12);
    // Separators alone leave no parts: two font lists that both failed to collect agree.
    expect(similarity({ fonts: ',' }, { fonts: ', ' }).score).toBe(1);
    // A list against one that failed to collect shares nothing.
    expect(similarity({ fonts: 'Arial' }, { fonts: ',' }).score).toBe(0);
    expect(similarity({ fonts: ',' }, { fonts: 'Arial' }).score).toBe(0);
  });

  it('measures the compared share of the stable weight, not of the volatile components', () => {
    // Time zone (8) and screen (6) are stable; languages (5) and locale (2) are not.
    const s = similarity({ timezone: 'a', screen: 'b', languages: 'en', locale: 'en' }, { timezone: 'a', screen: 'c', languages: 'en', locale: 'de' });
    expect(s.overlap).toBe(14 / STABLE_WEIGHT_TOTAL);
    expect(s.score).toBe((8 + 5) / 21);
    // A component present on one side only is not compared.
    expect(similarity({ timezone: 'a', screen: 'b' }, { timezone: 'a' }).overlap).toBe(8 / STABLE_WEIGHT_TOTAL);
  });
});

describe('kinds of change', () => {
  it('counts each differing component in its group', () => {
    const s = similarity(desk, {
      ...desk,
      canvas: 'other',
      webgl: 'Google Inc. (NVIDIA)|ANGLE (NVIDIA, NVIDIA GeForce RTX 3060 Direct3D12)',
      screen: '2560x1440',
      screenFrame: '{"bottom":0}',
      timezone: 'Asia/Tokyo',
      fonts: 'Arial,Calibri',
      hardware: '[4,8,null]',
      uaVersion: '131',
      locale: 'de-DE',
      color: '{"depth":30}',
    });
    expect(s.changed).toEqual({ ...noChange, render: 2, screen: 1, volatile: 1, timezone: 1, fonts: 1, language: 1, hardware: 1, version: 1, other: 1 });
  });

  it('tells a language a user added from a language list of another user', () => {
    const languages = (from: string, to: string) => {
      const { language, languageAdded } = similarity({ ...desk, languages: from }, { ...desk, languages: to }).changed;
      return { language, languageAdded };
    };
    // Added at the end or in between, the old list kept in order: what one user does.
    expect(languages('en-US,en', 'en-US,en,fr')).toEqual({ language: 0, languageAdded: 1 });
    expect(languages('en-US,en', 'en-US,fr,en')).toEqual({ language: 0, languageAdded: 1 });
    expect(languages('en-US', 'de,en-US')).toEqual({ language: 0, languageAdded: 1 });
    // Removed, reordered, replaced, or replaced by a longer list: another user's.
    expect(languages('en-US,en', 'en-US')).toEqual({ language: 1, languageAdded: 0 });
    expect(languages('en-US,en', 'en,en-US')).toEqual({ language: 1, languageAdded: 0 });
    expect(languages('en-US,en', 'de-DE,de')).toEqual({ language: 1, languageAdded: 0 });
    expect(languages('en-US,en', 'de-DE,de,fr')).toEqual({ language: 1, languageAdded: 0 });
  });

  it('counts a font added as a font change, not as a language added', () => {
    const s = similarity(desk, { ...desk, fonts: `${desk.fonts},Verdana` });
    expect(s.changed).toEqual({ ...noChange, fonts: 1 });
  });
});

describe('believing a device token', () => {
  const pick = (names: (keyof Components)[]): Components => Object.fromEntries(names.map((n) => [n, desk[n]]));
  /** Exactly the overlap a token needs: 37.5 of the 62.5 stable weight. */
  const enough = pick(['timezone', 'fonts', 'screen', 'hardware', 'fontPreferences', 'touch', 'math']);
  const { math: _, ...tooFew } = enough;

  it('believes a token when the fingerprint agrees with any of the visitor’s recent component sets', () => {
    const docked = { ...desk, screen: '3840x2160', timezone: 'America/New_York', fonts: 'Menlo', hardware: '[16,32,null]' };
    expect(tokenCheck([desk], docked)).toBe('inconsistent');
    expect(tokenCheck([desk, docked], docked)).toBe('consistent');
    expect(tokenCheck([docked, desk], desk)).toBe('consistent');
  });

  it('never believes a token across an impossible change, however similar the rest', () => {
    expect(tokenCheck([desk], { ...desk, uaVersion: '120' })).toBe('inconsistent');
    expect(tokenCheck([desk], { ...desk, browser: 'Firefox|Windows' })).toBe('inconsistent');
  });

  it('believes it at the consistency threshold and not below', () => {
    // 40 of the stable weight on both sides (0.64), 12 of it different: a score of exactly 0.7.
    const base = pick(['timezone', 'fonts', 'screen', 'hardware', 'fontPreferences', 'mediaPrefs', 'platform', 'browser']);
    const at = { ...base, screen: '1x1', hardware: '[1,1,null]' };
    expect(similarity(base, at).score).toBe(TOKEN_CONSISTENCY);
    expect(tokenCheck([base], at)).toBe('consistent');
    expect(tokenCheck([base], { ...at, platform: 'Linux' })).toBe('inconsistent');
  });

  it('does not believe a token sent with too few signals to corroborate it: a copied token on its own, or what a blocked script still sends', () => {
    expect(coverage(enough)).toBe(TOKEN_OVERLAP);
    expect(tokenCheck([desk], enough)).toBe('consistent');
    expect(coverage(tooFew)).toBeLessThan(TOKEN_OVERLAP);
    expect(tokenCheck([desk], tooFew)).toBe('uncorroborated');
    expect(tokenCheck([desk], {})).toBe('uncorroborated');
    // However sparse the visitor's own history: a sparse visit never agrees with it.
    expect(tokenCheck([tooFew], tooFew)).toBe('uncorroborated');
  });

  it('believes a token only against a stored set that shares the overlap needed with the visit, when the visitor has one', () => {
    // The visit is complete; beside a set that holds enough, one that holds too little cannot vouch for it.
    const docked = { ...desk, screen: '3840x2160', timezone: 'America/New_York', fonts: 'Menlo', hardware: '[16,32,null]' };
    expect(similarity(enough, desk).overlap).toBe(TOKEN_OVERLAP);
    expect(tokenCheck([enough], desk)).toBe('consistent');
    expect(tokenCheck([tooFew, enough], desk)).toBe('consistent');
    expect(tokenCheck([enough, tooFew], docked)).toBe('inconsistent');
    // Beside a set that vouches (exactly the overlap needed counts), a sparse one that agrees with another device does not.
    const sparseAgree = { timezone: 'Asia/Tokyo', screen: '1x1' };
    const other = { ...desk, ...sparseAgree, fonts: 'Menlo', hardware: '[1,1,null]', fontPreferences: 'x', touch: 'y' };
    expect(tokenCheck([sparseAgree], other)).toBe('consistent');
    expect(tokenCheck([enough, sparseAgree], other)).toBe('inconsistent');
    // A visitor that never showed enough is judged on what it showed: agreeing, or not.
    expect(tokenCheck([tooFew], desk)).toBe('consistent');
    expect(tokenCheck([tooFew], { ...desk, timezone: 'Asia/Tokyo', screen: '1x1', hardware: '[1,1,null]' })).toBe('inconsistent');
    expect(tokenCheck([tooFew], { ...desk, fonts: 'Menlo', fontPreferences: 'x', touch: 'y' })).toBe('inconsistent');
  });
});
