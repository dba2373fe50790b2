// Verdicts and risk vocabulary (spec 2.4, 2.6).
import { z } from 'zod';
import { BOT_CATEGORIES, BOT_IDENTITIES, BOT_VERDICT_KINDS } from './bots.js';
import './common.js';

export { BOT_CATEGORIES, BOT_IDENTITIES, BOT_VERDICT_KINDS, type BotCategory, type BotIdentity } from './bots.js';

/** A yes/no verdict, a component of its own so that each verdict's meaning is documented on its `result`. */
const flag = (title: string, meaning: string) => z.object({ result: z.boolean().describe(meaning) }).openapi({ title, description: `${meaning}.` });

const probability = (what: string) => z.number().min(0).max(1).describe(what);

export const BotInfoSchema = z
  .object({
    category: z
      .enum(BOT_CATEGORIES)
      .describe(
        'search_crawler, ai_crawler (collects training data), ai_assistant (fetches a page for a user), ai_agent (drives a browser), seo_marketing, monitoring, social_preview, feed_reader, archiver, scraper (an HTTP library or scraping tool), browser_automation (headless, CDP or WebDriver), unknown_automation',
      ),
    provider: z.string().nullable().describe('Who operates it (Google, OpenAI, …); null when unknown'),
    name: z.string().nullable().describe('The bot’s name (Googlebot, GPTBot, …); null when it names none'),
    identity: z
      .enum(BOT_IDENTITIES)
      .describe(
        '`verified`: the request comes from the operator’s published address ranges, or passes the reverse-and-forward DNS check its operator documents; `signed`: a valid Web Bot Auth signature (RFC 9421) from a key its directory publishes; `spoofed`: it claims a bot whose operator publishes how to verify it, and fails that; `unknown`: nothing proves or disproves the name',
      ),
    confidence: probability('0–1: how sure the naming is'),
    listDate: z
      .string()
      .nullable()
      .describe('For `verified` and `spoofed` by address: the date of the operator’s list that judged it (YYYY-MM-DD); null otherwise'),
  })
  .openapi({ title: 'BotInfo', description: 'Which bot the event is, and how far its name is proven; absent for a human.' });

export const VerdictsSchema = z
  .object({
    bot: z
      .object({
        result: z.boolean().describe('The event looks automated (a bot, headless browser or script)'),
        probability: probability('0–1: how likely the event is automated (the same as `botProbability`)'),
        kind: z
          .enum(BOT_VERDICT_KINDS)
          .describe(
            '`good` only for a bot proven to be who it says (`info.identity` verified or signed); `bad` for any other automation, a spoofed name included; `human` otherwise',
          ),
        // Absent rather than null for a human: OpenAPI 3.0 cannot say "this component, or null".
        info: BotInfoSchema.optional(),
      })
      .openapi({
        title: 'BotVerdict',
        description:
          'Combines datacenter ASN, headless markers, software renderer, API tampering and UA/TLS mismatch, with the bot’s name: from its User-Agent, proven by its operator’s address ranges, reverse DNS, or a Web Bot Auth signature.',
      }),
    vpn: z
      .object({
        result: z.boolean().describe('A VPN is likely in use'),
        confidence: probability('0–1: confidence of the VPN detection'),
      })
      .openapi({ title: 'VpnVerdict', description: 'VPN use, from IP ranges, time zone and locale coherence and round-trip times.' }),
    tor: flag('TorVerdict', 'Traffic comes from a known Tor exit node'),
    proxy: flag('ProxyVerdict', 'A residential or public proxy is detected'),
    incognito: flag('IncognitoVerdict', 'The browser is in private/incognito mode'),
    tampering: z
      .object({
        result: z.boolean().describe('Browser APIs or signals were tampered with (anti-detect browsers, spoofing extensions)'),
        anomalyScore: z.number().min(0).max(100).describe('0–100: how much the APIs and signals deviate from a genuine browser'),
      })
      .openapi({ title: 'TamperingVerdict', description: 'API or signal tampering.' }),
    headless: flag('HeadlessVerdict', 'Headless browser or automation markers'),
    virtualMachine: flag('VirtualMachineVerdict', 'The device appears to run in a virtual machine'),
    devtools: flag('DevtoolsVerdict', 'DevTools were open during collection'),
    privacyBrowser: z
      .object({
        result: z.boolean().describe('A known privacy-hardened browser'),
        name: z.string().nullable().describe('Its name (Brave, Tor Browser, ...); null when none'),
      })
      .openapi({ title: 'PrivacyBrowserVerdict', description: 'A privacy-hardened browser, which randomises or flattens signals.' }),
    highActivity: flag('HighActivityVerdict', 'The device was seen an unusually high number of times in a short window'),
    ipBlocklist: flag('IpBlocklistVerdict', 'The IP address is on a known blocklist'),
  })
  .openapi({ title: 'Verdicts', description: 'Boolean verdicts about the event (spec 2.4), each with its evidence.' });

const VelocityWindowSchema = z
  .object({
    '5m': z.number().int().nonnegative().describe('The count over the last 5 minutes'),
    '1h': z.number().int().nonnegative().describe('The count over the last hour'),
    '24h': z.number().int().nonnegative().describe('The count over the last 24 hours'),
  })
  .openapi({ title: 'VelocityWindow', description: 'One count over three rolling windows, up to this event.' });

export const VelocitySchema = z
  .object({
    distinctIp: VelocityWindowSchema,
    distinctCountry: VelocityWindowSchema,
    events: VelocityWindowSchema,
  })
  .openapi({
    title: 'Velocity',
    description:
      'Rolling-window counts for the visitor over 5 minutes, 1 hour and 24 hours: `distinctIp` its distinct IP addresses, `distinctCountry` its distinct countries, `events` its events.',
  });

export const FullVerdictsSchema = VerdictsSchema.extend({ velocity: VelocitySchema }).openapi({
  title: 'FullVerdicts',
  description: 'The verdicts of the full event: those of identify, plus `velocity`.',
});

export const RISK_FACTORS = [
  'HEADLESS_BROWSER',
  'SOFTWARE_RENDERER',
  'TOR_EXIT_NODE',
  'DATACENTER_ASN',
  'UA_TLS_MISMATCH',
  'LOW_RTT_COHERENCE',
  'VPN_DETECTED',
  'PROXY',
  'INCOGNITO',
  'TAMPERING',
  'HIGH_ACTIVITY',
  'IP_BLOCKLISTED',
  'VIRTUAL_MACHINE',
  'PRIVACY_BROWSER',
  'DEVTOOLS',
  'SPOOFED_BOT',
] as const;

export const RiskFactorSchema = z
  .enum(RISK_FACTORS)
  .openapi({ title: 'RiskFactor', description: 'An active risk indicator (spec 2.6; more values may be added).' });
