// Revisits of one device over the simulated window, with the drift real
// devices show. Persistent drift accumulates in the device's state (browser
// updates follow the release calendar and the device's update lag; storage
// clears, added languages, moved taskbars stay); transient drift affects one
// visit only (private browsing, farbling, signals that failed to collect).
import type { SignalName, SignalValues } from '../../contract/signals.js';
import {
  DAY,
  digest,
  EXTRA_LANGUAGES,
  expo,
  foreignZone,
  majorOn,
  newToken,
  pick,
  renderingKey,
  rng,
  signalsOf,
  START,
  trainOf,
  WINDOW_DAYS,
  type Device,
  type Rng,
} from './population.js';
import type { Rates, World } from './world.js';

export const DRIFTS = [
  'browserUpdate', // UA major +1 (or more after a long gap)
  'renderingChanged', // ... and the new engine renders canvas/WebGL/math/audio differently
  'screenChange', // laptop docked to / undocked from an external monitor
  'resize', // taskbar or dock moved, hidden or shown (screenFrame)
  'languageAdded',
  'travel', // time zone of another country, and back
  'storageCleared', // the user cleared site data: new device token
  'itpExpired', // Safari ITP deleted script-written storage after 7 days without a visit
  'incognito', // private window: an ephemeral token (or none), smaller quota, maybe farbling
  'farbled', // canvas/audio readback noise (Brave, Safari private, anti-fingerprint extensions)
  'tampering', // an extension lies about APIs (noise, spoofed core count)
  'signalsFailed', // some signals timed out or threw; severe cases keep only a handful
] as const;
export type Drift = (typeof DRIFTS)[number];

export interface Visit {
  t: number;
  values: Partial<SignalValues>;
  drift: Drift[];
}

/** Signals that time out or throw in practice (GPU blocklists, suspended audio, slow font probing). */
const FLAKY: readonly SignalName[][] = [
  ['audio', 'audioBaseLatency'],
  ['fonts'],
  ['webgl', 'webglExtensions'],
  ['canvas'],
  ['screenFrame'],
  ['domBlockers'],
  ['fontPreferences'],
  ['math'],
];
/** What still arrives when collection mostly failed (script blocked half-way, very old browser). */
const SURVIVORS: readonly SignalName[] = [
  'navigator',
  'userAgent',
  'timezone',
  'screenResolution',
  'storage',
  'cookiesEnabled',
  'deviceToken',
  'incognito',
  'automation',
  'tampering',
];

/** Rates the worlds do not vary (the rest come from World.rates). */
const P = {
  oneTimeVisitor: 0.3,
  extensionInstall: 0.0015,
  incognitoNoStorage: 0.05,
  incognitoDetected: 0.9,
  severeFailure: 0.005,
  braveNewSession: 0.6,
} as const;

export class Revisits {
  /** Visit days: the first visit, then the revisits. */
  readonly days: number[];
  private readonly r: Rng;
  private lastDay = 0;
  private tripLeft = 0;
  private braveSession = 0;

  private readonly rates: Rates;
  /** This device's chance of a private window per visit. */
  private readonly privateRate: number;

  constructor(
    readonly device: Device,
    firstDay: number,
    seed: number,
    world: World,
  ) {
    this.r = rng((seed * 1_000_003) ^ Math.imul(device.id + 1, 0x9e3779b1));
    this.rates = world.rates;
    this.days = [firstDay];
    // From a stream of its own, so that the other worlds' devices visit the same.
    const habit = world.privateHabit && rng(Math.imul(seed + 31, 0x27d4eb2f) ^ device.id)() < world.privateHabit.devices;
    this.privateRate = habit ? world.privateHabit!.visits : device.profile.mobile ? this.rates.incognitoMobile : this.rates.incognitoDesktop;
    if (this.r() < P.oneTimeVisitor) return;
    // Visits per day: log-uniform from one in 70 days to one every two days, median one in 12 (times the world's factor).
    const rate = (world.visitRate * Math.exp((this.r() - 0.5) * 3.6)) / 12;
    for (let d = firstDay + expo(this.r, 1 / rate); d < WINDOW_DAYS && this.days.length <= 30; d += expo(this.r, 1 / rate)) this.days.push(d);
  }

  /** The `i`-th visit (call in order). */
  visit(i: number): Visit {
    const day = this.days[i]!;
    const drift = new Set<Drift>();
    if (i > 0) this.evolve(day, drift);
    this.lastDay = day;
    return { t: START + Math.round(day * DAY), values: this.observe(drift), drift: DRIFTS.filter((d) => drift.has(d)) };
  }

  private evolve(day: number, drift: Set<Drift>) {
    const { r } = this;
    const p = this.device.profile;
    const s = this.device.state;
    const before = renderingKey(p, s);
    const major = majorOn(trainOf(p), day - p.updateLag);
    const osMajor = p.os === 'iOS' ? majorOn('apple', day - p.updateLag) : 0;
    if (major > s.major || osMajor > s.osMajor) {
      s.major = Math.max(major, s.major);
      s.osMajor = Math.max(osMajor, s.osMajor);
      drift.add('browserUpdate');
      if (renderingKey(p, s) !== before) drift.add('renderingChanged');
    }
    if (p.dockRate > 0) {
      const docked = r() < p.dockRate;
      if (docked !== s.docked) {
        s.docked = docked;
        s.screen = p.screens[docked ? 1 : 0]!;
        drift.add('screenChange');
      }
    }
    if (!p.mobile && r() < this.rates.frameChange) {
      const hidden = s.frame.bottom === 0 && s.frame.right === 0;
      s.frame = hidden ? { ...p.frame, bottom: p.frame.bottom || p.frame.right ? p.frame.bottom : 40 } : { ...s.frame, bottom: 0, right: 0 };
      drift.add('resize');
    }
    const singleLanguage = p.brave || (p.os === 'iOS' && p.family === 'Safari');
    if (!singleLanguage && r() < this.rates.languageAdded) {
      const extra = pick(
        r,
        EXTRA_LANGUAGES.filter((l) => !s.languages.includes(l)),
      );
      s.languages = [...s.languages, extra];
      drift.add('languageAdded');
    }
    if (this.tripLeft > 0) {
      if (--this.tripLeft === 0) s.zone = s.homeZone;
      drift.add('travel');
    } else if (p.portable && r() < this.rates.travel) {
      s.zone = foreignZone(r, p.country);
      this.tripLeft = 1 + Math.floor(r() * 3);
      drift.add('travel');
    }
    const webkit = p.os === 'iOS' || p.family === 'Safari';
    if (r() < this.rates.storageCleared) {
      this.renewToken(day);
      drift.add('storageCleared');
    } else if (webkit && day - this.lastDay > 7 && r() < this.rates.itpLoss) {
      this.renewToken(day);
      drift.add('itpExpired');
    }
    if (!p.mobile && !p.brave && !s.extension && r() < P.extensionInstall) s.extension = { audio: r() < 0.4, spoofsCores: r() < 0.2 };
  }

  private renewToken(day: number) {
    this.device.state.token = newToken(this.r);
    this.device.state.tokenCreatedAt = START + Math.round(day * DAY);
  }

  private observe(drift: Set<Drift>): Partial<SignalValues> {
    const { r } = this;
    const p = this.device.profile;
    const s = this.device.state;
    const v: Partial<SignalValues> = signalsOf(p, s);
    const webkit = p.os === 'iOS' || p.family === 'Safari';
    const noise = () => 1 + Math.floor(r() * 500);
    const random = () => digest(r(), r());

    if (r() < this.privateRate) {
      drift.add('incognito');
      v.deviceToken =
        r() < P.incognitoNoStorage
          ? { token: null, storage: null, createdAt: null }
          : { token: newToken(r), storage: 'localStorage', createdAt: v.deviceToken!.createdAt };
      v.incognito = {
        likely: r() < P.incognitoDetected,
        quotaMb: webkit ? 1000 : Math.round((p.memory ?? 4) * 100),
        heapLimitMb: v.incognito!.heapLimitMb,
        opfsError: p.family === 'Firefox' ? 'SecurityError' : webkit ? 'UnknownError' : null,
      };
      // Safari's Advanced Fingerprinting Protection is on in private windows.
      if (webkit) {
        v.canvas = { hash: random(), isFarbled: true };
        v.audio = { ...v.audio!, hash: random() };
        v.tampering = { ...v.tampering!, canvasNoise: noise(), audioNoise: noise() };
        drift.add('farbled');
      }
    }
    if (p.brave) {
      // Farbling seeds rotate per browser session; cores, fonts and plugins are farbled too.
      if (r() < P.braveNewSession) this.braveSession++;
      const seed = `${this.device.id}:${this.braveSession}`;
      v.canvas = { hash: random(), isFarbled: true };
      v.audio = { ...v.audio!, hash: random() };
      v.tampering = { ...v.tampering!, canvasNoise: noise(), audioNoise: noise() };
      v.navigator = { ...v.navigator!, hardwareConcurrency: 2 + Math.floor(Number.parseInt(digest(seed, 'cores').slice(0, 8), 16) % Math.max(1, p.cores - 1)) };
      const system = new Set(p.osFonts.split(','));
      v.fonts = { installed: p.fonts.filter((f) => system.has(f) || Number.parseInt(digest(seed, f).slice(0, 4), 16) % 5 !== 0) };
      v.plugins = { count: 7, names: [...v.plugins!.names, digest(seed, 'p1'), digest(seed, 'p2')], hash: digest(seed, 'plugins') };
      drift.add('farbled');
    }
    if (s.extension) {
      const lies = ['HTMLCanvasElement.toDataURL', 'CanvasRenderingContext2D.getImageData'];
      v.canvas = { hash: random(), isFarbled: true };
      v.tampering = { lieCount: 0, lies: [], canvasNoise: noise(), audioNoise: 0 };
      if (s.extension.audio) {
        v.audio = { ...v.audio!, hash: random() };
        v.tampering.audioNoise = noise();
        lies.push('AudioBuffer.getChannelData');
      }
      if (s.extension.spoofsCores) {
        v.navigator = { ...v.navigator!, hardwareConcurrency: pick(r, [2, 4, 8, 16]) };
        lies.push('Navigator.hardwareConcurrency');
      }
      v.tampering.lies = lies;
      v.tampering.lieCount = lies.length;
      drift.add('farbled');
      drift.add('tampering');
    }
    if (r() < P.severeFailure) {
      drift.add('signalsFailed');
      return Object.fromEntries(SURVIVORS.map((n) => [n, v[n]]));
    }
    if (r() < this.rates.failed) {
      drift.add('signalsFailed');
      for (let k = 1 + Math.floor(r() * 3); k > 0; k--) for (const n of pick(r, FLAKY)) delete v[n];
    }
    return v;
  }
}
