// The view of an identification event that decision rules see
// (contract/ruleFields.ts documents each field). Every field is always
// present, a missing value '' , 0, false or {}, so that no expression meets a
// missing field. Every string, list and the tag is within the VIEW_* bounds
// below and the tag within LIMITS.tagBytes of JSON: the bounds the engine's
// cost estimate counts on (engine.ts).
import { LRUCache } from 'lru-cache';
import { UAParser } from 'ua-parser-js';
import type { z } from 'zod';
import type { ServerSignalsSchema } from '../../contract/edge.js';
import { LIMITS } from '../../contract/identify.js';
import type { SignalValues } from '../../contract/signals.js';
import type { EventDoc } from '../store/events.js';

type ServerSignals = z.infer<typeof ServerSignalsSchema>;

/** The longest string of the view (an identify's url and referrer are at most this long already). */
export const VIEW_STRING_MAX = LIMITS.urlChars;
/** The most risk factors the view holds (twice the 16 kinds there are), and the longest one it holds. */
export const VIEW_LIST_MAX = 32;
export const VIEW_FACTOR_MAX = 64;
/** The longest User-Agent (what the signals' contract takes). */
export const VIEW_USER_AGENT_MAX = 1024;

interface PerWindow {
  m5: number;
  h1: number;
  h24: number;
}
const flag = (result: boolean) => ({ result });
type Flag = ReturnType<typeof flag>;

export interface DecisionView {
  requestId: string;
  visitorId: string;
  visitCount: number;
  firstSeenAt: number;
  timestamp: number;
  newVisitor: boolean;
  confidence: number;
  botProbability: number;
  suspectScore: number;
  riskFactors: string[];
  verdicts: {
    bot: { result: boolean; probability: number; kind: string; category: string; provider: string; name: string; identity: string };
    vpn: { result: boolean; confidence: number };
    tor: Flag;
    proxy: Flag;
    incognito: Flag;
    headless: Flag;
    virtualMachine: Flag;
    devtools: Flag;
    highActivity: Flag;
    ipBlocklist: Flag;
    tampering: { result: boolean; anomalyScore: number };
    privacyBrowser: { result: boolean; name: string };
  };
  velocity: { distinctIp: PerWindow; distinctCountry: PerWindow; events: PerWindow };
  ip: string;
  ipVersion: number;
  ipLocation: { country: string; city: string; region: string; asn: number; asnOrg: string; networkCategory: string };
  linkedId: string;
  linkedIdVouched: boolean;
  tag: Record<string, unknown>;
  browser: { name: string; version: string; major: number };
  os: { name: string; version: string };
  device: { type: string; vendor: string; model: string };
  userAgent: string;
  url: string;
  urlPath: string;
  origin: string;
  referrer: string;
}

export interface ViewInput {
  event: EventDoc;
  /** The event's client signals, unwrapped (only the User-Agent is read). */
  client: Pick<Partial<SignalValues>, 'userAgent'>;
  /** The edge's signals; null when there were none. */
  server: Pick<ServerSignals, 'asn' | 'ipNetwork'> | null;
  visitCount: number;
  firstSeenAt: number;
  linkedIdVouched: boolean;
}

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : {});
const str = (v: unknown): string => (typeof v === 'string' ? v.slice(0, VIEW_STRING_MAX) : '');
const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
/** CEL ints are 64-bit integers: a fraction is cut, anything else not a safe integer is 0. */
const int = (v: unknown): number => (typeof v === 'number' && Number.isSafeInteger(Math.trunc(v)) ? Math.trunc(v) : 0);
const bool = (v: unknown): boolean => v === true;

function perWindow(v: unknown): PerWindow {
  const w = obj(v);
  return { m5: int(w['5m']), h1: int(w['1h']), h24: int(w['24h']) };
}

interface UaView {
  readonly browser: DecisionView['browser'];
  readonly os: DecisionView['os'];
  readonly device: DecisionView['device'];
}

/** Parsed User-Agents: a site's visitors share few, and ua-parser-js's regular expressions are too slow to run per event. */
const parsedUas = new LRUCache<string, UaView>({ max: 2_000 });

function uaView(userAgent: string): UaView {
  const known = parsedUas.get(userAgent);
  if (known) return known;
  const r = new UAParser(userAgent).getResult();
  const parsed = Object.freeze({
    browser: Object.freeze({ name: str(r.browser.name), version: str(r.browser.version), major: int(Number.parseInt(r.browser.major ?? '', 10)) }),
    os: Object.freeze({ name: str(r.os.name), version: str(r.os.version) }),
    device: Object.freeze({ type: str(r.device.type), vendor: str(r.device.vendor), model: str(r.device.model) }),
  });
  parsedUas.set(userAgent, parsed);
  return parsed;
}

function urlParts(url: string): { urlPath: string; origin: string } {
  if (!URL.canParse(url)) return { urlPath: '', origin: '' };
  const u = new URL(url);
  // Opaque origins (data:, file:, about:) serialise as 'null'.
  return { urlPath: str(u.pathname), origin: u.origin === 'null' ? '' : str(u.origin) };
}

/** The tag as stored; anything but a JSON object (or more than the tag limit, which identify never stores) is {}. */
function tagOf(tagJson: string | null): Record<string, unknown> {
  if (tagJson === null || tagJson.length > LIMITS.tagBytes) return {};
  try {
    return obj(JSON.parse(tagJson));
  } catch {
    return {};
  }
}

function ipVersionOf(ip: string): number {
  if (ip.includes(':')) return 6;
  return ip.includes('.') ? 4 : 0;
}

export function decisionView(input: ViewInput): DecisionView {
  const { event: e, server } = input;
  const v = obj(e.verdicts);
  const bot = obj(v.bot);
  const botInfo = obj(bot.info);
  const loc = obj(e.ipLocation);
  const velocity = obj(v.velocity);
  const userAgent = str(input.client.userAgent?.userAgent).slice(0, VIEW_USER_AGENT_MAX);
  const ua = uaView(userAgent);
  const url = str(e.url);
  const category = str(server?.asn.category);
  const visitCount = int(input.visitCount);
  return {
    requestId: str(e._id),
    visitorId: str(e.visitorId),
    visitCount,
    firstSeenAt: int(input.firstSeenAt),
    timestamp: int(e.timestamp),
    newVisitor: visitCount === 1,
    confidence: num(e.confidence),
    botProbability: num(e.botProbability),
    suspectScore: int(e.suspectScore),
    riskFactors: Array.isArray(e.riskFactors) ? e.riskFactors.slice(0, VIEW_LIST_MAX).map((f) => str(f).slice(0, VIEW_FACTOR_MAX)) : [],
    verdicts: {
      bot: {
        result: bool(bot.result),
        probability: num(bot.probability),
        kind: str(bot.kind),
        category: str(botInfo.category),
        provider: str(botInfo.provider),
        name: str(botInfo.name),
        identity: str(botInfo.identity),
      },
      vpn: { result: bool(obj(v.vpn).result), confidence: num(obj(v.vpn).confidence) },
      tor: flag(bool(obj(v.tor).result)),
      proxy: flag(bool(obj(v.proxy).result)),
      incognito: flag(bool(obj(v.incognito).result)),
      headless: flag(bool(obj(v.headless).result)),
      virtualMachine: flag(bool(obj(v.virtualMachine).result)),
      devtools: flag(bool(obj(v.devtools).result)),
      highActivity: flag(bool(obj(v.highActivity).result)),
      ipBlocklist: flag(bool(obj(v.ipBlocklist).result)),
      tampering: { result: bool(obj(v.tampering).result), anomalyScore: num(obj(v.tampering).anomalyScore) },
      privacyBrowser: { result: bool(obj(v.privacyBrowser).result), name: str(obj(v.privacyBrowser).name) },
    },
    velocity: { distinctIp: perWindow(velocity.distinctIp), distinctCountry: perWindow(velocity.distinctCountry), events: perWindow(velocity.events) },
    ip: str(e.ip),
    ipVersion: server ? int(server.ipNetwork.version) : ipVersionOf(str(e.ip)),
    ipLocation: {
      country: str(loc.country),
      city: str(loc.city),
      region: str(loc.region),
      asn: int(server?.asn.asn),
      asnOrg: str(server?.asn.org),
      networkCategory: category === 'UNKNOWN' ? '' : category,
    },
    linkedId: str(e.linkedId),
    linkedIdVouched: bool(input.linkedIdVouched),
    tag: tagOf(e.tagJson),
    browser: { ...ua.browser },
    os: { ...ua.os },
    device: { ...ua.device },
    userAgent,
    url,
    ...urlParts(url),
    referrer: str(e.referrer),
  };
}
