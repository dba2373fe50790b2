// Verdicts and risk vocabulary (spec 2.4, 2.6).
import { z } from 'zod';
import './common.js';

const flag = z.object({ result: z.boolean() });
const window = z.object({ '5m': z.number().int().nonnegative(), '1h': z.number().int().nonnegative(), '24h': z.number().int().nonnegative() });

export const VerdictsSchema = z
  .object({
    bot: z.object({ result: z.boolean(), probability: z.number().min(0).max(1) }),
    vpn: z.object({ result: z.boolean(), confidence: z.number().min(0).max(1) }),
    tor: flag.describe('Traffic comes from a known Tor exit node'),
    proxy: flag.describe('A residential or public proxy is detected'),
    incognito: flag.describe('Private/incognito mode'),
    tampering: z.object({ result: z.boolean(), anomalyScore: z.number().min(0).max(100) }),
    headless: flag.describe('Headless browser or automation markers'),
    virtualMachine: flag.describe('Device appears to run in a virtual machine'),
    devtools: flag.describe('DevTools open during collection'),
    privacyBrowser: z.object({ result: z.boolean(), name: z.string().nullable() }),
    highActivity: flag.describe('Device seen an unusually high number of times in a short window'),
    ipBlocklist: flag.describe('IP is on a known blocklist'),
  })
  .openapi({ title: 'Verdicts' });

export const VelocitySchema = z
  .object({ distinctIp: window, distinctCountry: window, events: window })
  .openapi({ title: 'Velocity', description: 'Rolling-window counts for the visitor over 5 minutes, 1 hour and 24 hours.' });

export const FullVerdictsSchema = VerdictsSchema.extend({ velocity: VelocitySchema }).openapi({ title: 'FullVerdicts' });

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
] as const;

export const RiskFactorSchema = z.enum(RISK_FACTORS).describe('Active risk indicator');
