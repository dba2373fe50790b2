// Verdicts, scores and risk factors from the evidence of one request: the
// client signals, the edge facts and the visitor's recent activity. Every
// verdict below names the evidence it uses; nothing is guessed.
import type { z } from 'zod';
import type { ServerSignalsSchema } from '../../contract/edge.js';
import type { RISK_FACTORS } from '../../contract/risk.js';
import type { Signals } from '../identification/components.js';
import { uaFacts } from '../identification/components.js';
import type { RecentActivity } from '../store/visitors.js';
import { botVerdict } from './botVerdict.js';
import type { EdgeFacts } from './edgeFacts.js';

type RiskFactor = (typeof RISK_FACTORS)[number];
type ServerSignals = z.infer<typeof ServerSignalsSchema>;

const MIN = 60_000;
export const VELOCITY_WINDOWS = { '5m': 5 * MIN, '1h': 60 * MIN, '24h': 24 * 60 * MIN } as const;
/** highActivity: more than this many identifications of one device in an hour, or per day. */
export const HIGH_ACTIVITY = { perHour: 60, perDay: 500 } as const;

/** Headless/automation evidence reported by the agent. */
function headlessMarkers(s: Signals): string[] {
  const a = s.automation;
  if (!a) return [];
  const m: string[] = [];
  if (a.webdriver) m.push('navigator.webdriver');
  if (a.headlessUserAgent) m.push('headless user agent');
  if (a.globals.length) m.push(`automation globals: ${a.globals.join(',')}`);
  if (a.documentAttributes.length) m.push('automation document attributes');
  if (a.zeroOuterSize) m.push('zero outer window size');
  return m;
}

const SOFTWARE_RENDERER = /swiftshader|llvmpipe|softpipe|mesa offscreen|microsoft basic render/i;

export function softwareRenderer(s: Signals): boolean {
  return s.virtualMachine?.softwareRenderer === true || SOFTWARE_RENDERER.test(s.webgl?.renderer ?? '');
}

/** Browser family claimed by the UA versus what the TLS/HTTP stack says. */
function uaTlsMismatch(s: Signals, edge: EdgeFacts): { mismatch: boolean; evidence: string } {
  const ua = uaFacts(s.userAgent?.userAgent);
  if (!ua) return { mismatch: false, evidence: 'no user agent collected' };
  const cls = edge.http.classification;
  if (cls !== 'browser' && cls !== 'unknown' && cls !== 'headless') {
    return { mismatch: true, evidence: `user agent claims ${ua.browser} but the HTTP client looks like ${cls}` };
  }
  if (!edge.tls.ja4) return { mismatch: false, evidence: 'no TLS fingerprint available' };
  // JA4 "t13d..." with ALPN h2 is what current browsers send; HTTP/1.1-only TLS 1.2 clients are tools.
  const modern = /^t13d\d{4}h2/.test(edge.tls.ja4);
  return modern
    ? { mismatch: false, evidence: `TLS ${edge.tls.ja4} fits a browser` }
    : { mismatch: true, evidence: `user agent claims ${ua.browser} but TLS ${edge.tls.ja4} is not a browser handshake` };
}

type PerWindow = Record<keyof typeof VELOCITY_WINDOWS, number>;

function velocityOf(recent: RecentActivity[], now: number): { distinctIp: PerWindow; distinctCountry: PerWindow; events: PerWindow } {
  const out = { distinctIp: {} as PerWindow, distinctCountry: {} as PerWindow, events: {} as PerWindow };
  for (const name of Object.keys(VELOCITY_WINDOWS) as (keyof typeof VELOCITY_WINDOWS)[]) {
    // One pass over the window's activity per window, on identify's path.
    const inWindow = recent.filter((r) => r.t > now - VELOCITY_WINDOWS[name]);
    out.events[name] = inWindow.length;
    out.distinctIp[name] = new Set(inWindow.map((r) => r.ip)).size;
    out.distinctCountry[name] = new Set(inWindow.map((r) => r.country).filter(Boolean)).size;
  }
  return out;
}

/** Fingerprint's published suspect-score weights (web), normalised to 0–100. */
const SUSPECT_WEIGHTS = {
  bot: 7,
  incognito: 4,
  vpn: 4,
  tampering: 8,
  virtualMachine: 14,
  privacyBrowser: 6,
  ipBlocklist: 14,
  tor: 14,
  proxy: 14,
  highActivity: 6,
} as const;
const SUSPECT_TOTAL = Object.values(SUSPECT_WEIGHTS).reduce((a, b) => a + b, 0);
/** Suspect points of a spoofed bot name (a Tor exit's share of the score). */
const SPOOFED_BOT_POINTS = Math.round((100 * SUSPECT_WEIGHTS.tor) / SUSPECT_TOTAL);

/**
 * Bot probability: independent pieces of evidence combined as
 * 1 − Π(1 − pᵢ). Weights: automation markers 0.9, non-browser HTTP client
 * 0.6, software renderer 0.35, datacenter network 0.3, UA/TLS mismatch 0.3,
 * API tampering 0.2.
 */
/** The anomaly score of a known device token presented without the signals to back it: tampering. */
const UNCORROBORATED_ANOMALY = 60;

const BOT_EVIDENCE = { headless: 0.9, toolClient: 0.6, softwareRenderer: 0.35, datacenter: 0.3, uaTlsMismatch: 0.3, tampering: 0.2 } as const;

/**
 * `uncorroboratedToken`: the visit presented a device token (or device cookie)
 * of a known visitor without the signals to back it (identification did not
 * believe it): what a copied token sent on its own looks like, so tampering.
 */
export function assessRisk(s: Signals, edge: EdgeFacts, recent: RecentActivity[], now: number, uncorroboratedToken = false) {
  const markers = headlessMarkers(s);
  const headless = markers.length > 0 || edge.http.classification === 'headless';
  const swRenderer = softwareRenderer(s);
  const uaTls = uaTlsMismatch(s, edge);
  const toolClient = !['browser', 'headless', 'unknown'].includes(edge.http.classification);

  const t = s.tampering;
  const lies = t ? Math.min(100, t.lieCount * 15 + (t.canvasNoise > 0 ? 30 : 0) + (t.audioNoise > 0 ? 30 : 0)) : 0;
  const anomalyScore = uncorroboratedToken ? Math.max(lies, UNCORROBORATED_ANOMALY) : lies;
  const tampered = anomalyScore >= 50;

  // Time zone vs IP location: the classic VPN tell.
  const deviceTz = s.timezone?.name ?? null;
  const ipTz = edge.location.timezone;
  const tzCheck =
    deviceTz && ipTz
      ? deviceTz === ipTz
        ? { result: 'consistent' as const, evidence: `device ${deviceTz} matches IP location` }
        : { result: 'inconsistent' as const, evidence: `device ${deviceTz}, IP located in ${ipTz}` }
      : { result: 'unknown' as const, evidence: deviceTz ? 'IP location has no time zone' : 'device time zone not collected' };
  const langCheck = languagesVsCountry(s.navigator?.languages, edge.location.country);
  const rttCoherence = coherence(tzCheck.result, langCheck.result, deviceOffsetMatches(s, ipTz, now));

  const vpnRange = edge.lists.vpn === true;
  const vpnVerdict =
    vpnRange || edge.asn.category === 'VPN_COMMERCIAL'
      ? 'detected'
      : tzCheck.result === 'inconsistent' && edge.asn.isDatacenter
        ? 'detected'
        : tzCheck.result === 'inconsistent'
          ? 'suspected'
          : 'not_detected';
  const vpnConfidence = vpnVerdict === 'detected' ? (vpnRange ? 0.95 : 0.8) : vpnVerdict === 'suspected' ? 0.5 : tzCheck.result === 'consistent' ? 0.9 : 0.5;

  const botP =
    1 -
    [
      headless ? BOT_EVIDENCE.headless : 0,
      toolClient ? BOT_EVIDENCE.toolClient : 0,
      swRenderer ? BOT_EVIDENCE.softwareRenderer : 0,
      edge.asn.isDatacenter || edge.lists.datacenter === true ? BOT_EVIDENCE.datacenter : 0,
      uaTls.mismatch ? BOT_EVIDENCE.uaTlsMismatch : 0,
      tampered ? BOT_EVIDENCE.tampering : 0,
    ].reduce((acc, p) => acc * (1 - p), 1);
  const bot = botVerdict(edge.bot, { headless, automated: botP >= 0.5 });
  // A named bot is automated whatever the signals say; a good one most of all.
  const botProbability = Math.round((bot.info?.name ? Math.max(botP, bot.info.confidence) : botP) * 1000) / 1000;
  const spoofedBot = bot.info?.identity === 'spoofed';

  const velocity = velocityOf(recent, now);
  const highActivity = velocity.events['1h'] > HIGH_ACTIVITY.perHour || velocity.events['24h'] > HIGH_ACTIVITY.perDay;
  const vm = s.virtualMachine ? s.virtualMachine.virtualGpu !== null || (swRenderer && !headless) : false;

  const verdicts = {
    bot: { result: botProbability >= 0.5 || bot.kind !== 'human', probability: botProbability, kind: bot.kind, ...(bot.info && { info: bot.info }) },
    vpn: { result: vpnVerdict === 'detected', confidence: vpnConfidence },
    tor: { result: edge.lists.torExit === true },
    proxy: { result: edge.lists.proxy === true },
    incognito: { result: s.incognito?.likely ?? false },
    tampering: { result: tampered, anomalyScore },
    headless: { result: headless },
    virtualMachine: { result: vm },
    devtools: { result: s.devtools?.open ?? false },
    privacyBrowser: { result: (s.privacyBrowser?.name ?? null) !== null, name: s.privacyBrowser?.name ?? null },
    highActivity: { result: highActivity },
    ipBlocklist: { result: edge.lists.blocklisted === true },
  };

  const factors: RiskFactor[] = [];
  const add = (cond: boolean, f: RiskFactor) => cond && factors.push(f);
  add(headless, 'HEADLESS_BROWSER');
  add(swRenderer, 'SOFTWARE_RENDERER');
  add(verdicts.tor.result, 'TOR_EXIT_NODE');
  add(edge.asn.isDatacenter || edge.lists.datacenter === true, 'DATACENTER_ASN');
  add(uaTls.mismatch, 'UA_TLS_MISMATCH');
  add(rttCoherence !== null && rttCoherence < 0.3, 'LOW_RTT_COHERENCE');
  add(verdicts.vpn.result, 'VPN_DETECTED');
  add(verdicts.proxy.result, 'PROXY');
  add(verdicts.incognito.result, 'INCOGNITO');
  add(tampered, 'TAMPERING');
  add(highActivity, 'HIGH_ACTIVITY');
  add(verdicts.ipBlocklist.result, 'IP_BLOCKLISTED');
  add(vm, 'VIRTUAL_MACHINE');
  add(verdicts.privacyBrowser.result, 'PRIVACY_BROWSER');
  add(verdicts.devtools.result, 'DEVTOOLS');
  add(spoofedBot, 'SPOOFED_BOT');

  let suspect = 0;
  for (const [name, w] of Object.entries(SUSPECT_WEIGHTS)) {
    if ((verdicts as Record<string, { result: boolean }>)[name]!.result) suspect += w;
  }
  // A bot that claims a name it fails to prove is out to be let through: as suspect as a Tor exit, on top.
  const suspectScore = Math.min(100, Math.round((100 * suspect) / SUSPECT_TOTAL) + (spoofedBot ? SPOOFED_BOT_POINTS : 0));

  const uaPlatform = userAgentVsPlatform(s);
  const server: ServerSignals = {
    asn: { ...edge.asn },
    geo: { country: edge.location.country, city: edge.location.city, timezone: edge.location.timezone, rttCoherence },
    tls: { ...edge.tls },
    vpnDetection: { verdict: vpnVerdict, confidence: vpnConfidence },
    ipNetwork: {
      version: edge.ipVersion,
      prefix: edge.prefix,
      isPrivate: edge.isPrivate,
      isTorExit: edge.lists.torExit,
      isBlocklisted: edge.lists.blocklisted,
      isProxy: edge.lists.proxy,
      isVpn: edge.lists.vpn,
    },
    http: { ...edge.http },
    consistency: {
      timezoneVsIp: tzCheck,
      languagesVsCountry: langCheck,
      userAgentVsPlatform: uaPlatform,
      userAgentVsTls:
        uaTls.evidence === 'no TLS fingerprint available' || uaTls.evidence === 'no user agent collected'
          ? { result: 'unknown', evidence: uaTls.evidence }
          : { result: uaTls.mismatch ? 'inconsistent' : 'consistent', evidence: uaTls.evidence },
    },
  };

  return { verdicts, velocity, riskFactors: factors, botProbability, suspectScore, server };
}

/** Countries whose main languages we can check cheaply; others are 'unknown'. */
const COUNTRY_LANGS: Record<string, string[]> = {
  US: ['en', 'es'],
  GB: ['en'],
  CA: ['en', 'fr'],
  AU: ['en'],
  NZ: ['en'],
  IE: ['en', 'ga'],
  DE: ['de'],
  AT: ['de'],
  CH: ['de', 'fr', 'it'],
  FR: ['fr'],
  BE: ['nl', 'fr', 'de'],
  NL: ['nl'],
  ES: ['es', 'ca', 'gl', 'eu'],
  MX: ['es'],
  AR: ['es'],
  IT: ['it'],
  PT: ['pt'],
  BR: ['pt'],
  PL: ['pl'],
  CZ: ['cs'],
  SE: ['sv'],
  NO: ['nb', 'no', 'nn'],
  DK: ['da'],
  FI: ['fi', 'sv'],
  RU: ['ru'],
  UA: ['uk', 'ru'],
  TR: ['tr'],
  JP: ['ja'],
  KR: ['ko'],
  CN: ['zh'],
  TW: ['zh'],
  IN: ['hi', 'en'],
  IL: ['he'],
  GR: ['el'],
  HU: ['hu'],
  RO: ['ro'],
};

function languagesVsCountry(languages: string[] | undefined, country: string) {
  if (!languages?.length) return { result: 'unknown' as const, evidence: 'languages not collected' };
  const expected = COUNTRY_LANGS[country];
  if (!expected) return { result: 'unknown' as const, evidence: country ? `no language table for ${country}` : 'IP country unknown' };
  const primary = languages.map((l) => l.toLowerCase().split('-')[0]!);
  // English is a common second language everywhere, so only a full miss counts.
  return primary.some((l) => expected.includes(l) || l === 'en')
    ? { result: 'consistent' as const, evidence: `${languages.join(',')} fits ${country}` }
    : { result: 'inconsistent' as const, evidence: `${languages.join(',')} unusual for ${country}` };
}

function deviceOffsetMatches(s: Signals, ipTz: string | null, now: number): boolean | null {
  if (!s.timezone || !ipTz) return null;
  try {
    // Compare standard offsets (the agent reports the non-DST offset): take January and July, keep the smaller.
    const offset = (d: Date) => {
      const parts = new Intl.DateTimeFormat('en-US', { timeZone: ipTz, timeZoneName: 'longOffset' }).formatToParts(d);
      const m = /GMT([+-])(\d{2}):(\d{2})/.exec(parts.find((p) => p.type === 'timeZoneName')?.value ?? '');
      return m ? (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3])) : 0;
    };
    const y = new Date(now).getUTCFullYear();
    const std = Math.min(offset(new Date(Date.UTC(y, 0, 1))), offset(new Date(Date.UTC(y, 6, 1))));
    return std === s.timezone.offset;
  } catch {
    return null;
  }
}

/**
 * rttCoherence: agreement between where the IP says the device is and what
 * the device says (time zone name, UTC offset, languages). Each check that
 * can be made counts equally; null when none can. (No round-trip time is
 * measured yet, so it rests on locale evidence alone.)
 */
function coherence(tz: 'consistent' | 'inconsistent' | 'unknown', lang: 'consistent' | 'inconsistent' | 'unknown', offsetOk: boolean | null): number | null {
  const checks: number[] = [];
  if (tz !== 'unknown') checks.push(tz === 'consistent' ? 1 : 0);
  if (offsetOk !== null) checks.push(offsetOk ? 1 : 0);
  if (lang !== 'unknown') checks.push(lang === 'consistent' ? 1 : 0);
  return checks.length ? Math.round((checks.reduce((a, b) => a + b, 0) / checks.length) * 100) / 100 : null;
}

function userAgentVsPlatform(s: Signals) {
  const ua = uaFacts(s.userAgent?.userAgent);
  const platform = s.navigator?.platform;
  if (!ua || !platform) return { result: 'unknown' as const, evidence: 'user agent or platform not collected' };
  const os = ua.os.toLowerCase();
  const p = platform.toLowerCase();
  const fits =
    (os.includes('windows') && p.startsWith('win')) ||
    ((os.includes('mac') || os === 'ios') && (p.startsWith('mac') || p.startsWith('iphone') || p.startsWith('ipad'))) ||
    ((os.includes('linux') || os.includes('ubuntu') || os.includes('android') || os.includes('chrom')) &&
      (p.includes('linux') || p.includes('android') || p.includes('arm'))) ||
    (os === 'ios' && p.startsWith('ip'));
  return fits
    ? { result: 'consistent' as const, evidence: `${ua.os} user agent on ${platform}` }
    : { result: 'inconsistent' as const, evidence: `${ua.os} user agent but platform ${platform}` };
}
