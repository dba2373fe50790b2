// What the dashboard's explorer tables show of an event and of a visit.
import type { z } from 'zod';
import type { FullEventSchema } from '../../contract/events.js';
import type { EventSummarySchema, VisitSummarySchema } from '../../contract/explorer.js';
import type { VisitSchema } from '../../contract/visits.js';
import { botKindOf } from '../store/eventIndex.js';

type FullEvent = z.infer<typeof FullEventSchema>;
type Visit = z.infer<typeof VisitSchema>;
export type EventSummary = z.infer<typeof EventSummarySchema>;
export type VisitSummary = z.infer<typeof VisitSummarySchema>;

const BROWSERS: ReadonlyArray<readonly [string, RegExp]> = [
  ['Edge', /\bEdg(?:e|A|iOS)?\/(\d+)/],
  ['Opera', /\bOPR\/(\d+)/],
  ['Samsung Internet', /\bSamsungBrowser\/(\d+)/],
  ['Firefox', /\b(?:Firefox|FxiOS)\/(\d+)/],
  ['Headless Chrome', /\bHeadlessChrome\/(\d+)/],
  ['Chrome', /\b(?:Chrome|CriOS)\/(\d+)/],
  ['Safari', /\bVersion\/(\d+)[.\d]*(?: Mobile\/\w+)? Safari\//],
];

const SYSTEMS: ReadonlyArray<readonly [string, RegExp]> = [
  ['Android', /\bAndroid (\d+)?/],
  ['iOS', /\b(?:iPhone|iPad|iPod)\b.*? OS (\d+)?/],
  ['Windows', /\bWindows\b/],
  ['macOS', /\bMac OS X\b/],
  ['ChromeOS', /\bCrOS\b/],
  ['Linux', /\bLinux\b/],
];

/**
 * "Chrome 130 on Windows", "Safari 17 on iOS 17", "curl 8.5.0": the browser
 * (or client) and the system a User-Agent names, for people; "Unknown" when
 * it names neither.
 */
export function browserOf(userAgent: string): string {
  const named = (list: typeof BROWSERS) => {
    for (const [name, re] of list) {
      const m = re.exec(userAgent);
      if (m) return m[1] ? `${name} ${m[1]}` : name;
    }
    return null;
  };
  const browser = named(BROWSERS);
  const system = named(SYSTEMS);
  if (browser && system) return `${browser} on ${system}`;
  if (browser || system) return (browser ?? system)!;
  // A tool's own product token (curl/8.5.0, python-requests/2.31).
  const tool = /^([A-Za-z][\w.-]{0,40})\/([\w.]{1,20})/.exec(userAgent);
  return tool && tool[1] !== 'Mozilla' ? `${tool[1]} ${tool[2]}` : 'Unknown';
}

export function eventSummary(e: FullEvent): EventSummary {
  const ua = e.signals.client.userAgent?.userAgent ?? '';
  return {
    requestId: e.requestId,
    visitorId: e.visitorId,
    timestamp: e.timestamp,
    ip: e.ip,
    country: e.signals.server.geo.country,
    city: e.signals.server.geo.city,
    browser: browserOf(ua),
    bot: botKindOf(e.verdicts.bot),
    ...(e.verdicts.bot.info && { botInfo: e.verdicts.bot.info }),
    botProbability: e.botProbability,
    suspect: e.suspect,
    suspectScore: e.suspectScore,
    confidence: e.confidence,
    ...(e.linkedId !== undefined ? { linkedId: e.linkedId } : {}),
    url: e.url,
  };
}

export function visitSummary(v: Visit): VisitSummary {
  return {
    id: v.id,
    timestamp: v.timestamp,
    country: v.country,
    city: v.city,
    region: v.region,
    network: v.asnOrg,
    browser: browserOf(v.signals.client.userAgent?.userAgent ?? ''),
    confidence: v.confidence,
    botProbability: v.botProbability,
    riskFactors: v.riskFactors,
    ...(v.originalVisitorId !== undefined ? { originalVisitorId: v.originalVisitorId } : {}),
  };
}
