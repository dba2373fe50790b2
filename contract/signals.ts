// Browser signals: one zod schema per signal name. A request wraps each value
// as a SignalResult `{value, duration}`; the full event stores the value alone.
import { z } from 'zod';
import './common.js';

const hash = z.string().min(1).max(128);

export const signalValueSchemas = {
  canvas: z
    .object({
      hash: hash.describe('Hash of the rendered text+geometry canvas image'),
      isFarbled: z.boolean().describe('True when two renders differ: the browser adds noise (Brave, Safari 17+ private), so the hash is volatile'),
    })
    .describe('2D canvas rendering. Stable per GPU/driver/font stack unless the browser farbles it.'),
  webgl: z
    .object({
      renderer: z.string().max(256).describe('UNMASKED_RENDERER_WEBGL, e.g. "ANGLE (NVIDIA, GeForce RTX 3060 ...)"'),
      vendor: z.string().max(256).describe('UNMASKED_VENDOR_WEBGL'),
    })
    .describe('GPU identity as WebGL reports it. Stable until a driver or hardware change; software renderers (SwiftShader, llvmpipe) indicate headless or VMs.'),
  audio: z
    .object({
      hash: hash.describe('Hash of an OfflineAudioContext oscillator+compressor render'),
      sampleRate: z.number().min(1).max(1_000_000).describe('AudioContext sample rate in Hz'),
    })
    .describe('Audio stack fingerprint. Stable per OS/CPU; some browsers add noise.'),
  navigator: z
    .object({
      hardwareConcurrency: z.number().int().nonnegative().max(4096).describe('Logical CPU cores'),
      platform: z.string().max(128).describe('navigator.platform'),
      languages: z.array(z.string().max(35)).max(32).describe('navigator.languages, most preferred first'),
    })
    .describe('Core navigator properties. Cores and platform are stable; languages drift when the user changes preferences.'),
} as const;

export type SignalName = keyof typeof signalValueSchemas;
export const SIGNAL_NAMES = Object.keys(signalValueSchemas) as SignalName[];

const signalResult = <T extends z.ZodTypeAny>(value: T) =>
  z.object({
    value,
    duration: z.number().nonnegative().max(600_000).describe('Collection time in milliseconds'),
  });

type Values = typeof signalValueSchemas;
type SignalResultSchema<T> = z.ZodObject<{ value: T extends z.ZodTypeAny ? T : never; duration: z.ZodNumber }>;
type SignalsShape = { [K in SignalName]: z.ZodOptional<SignalResultSchema<Values[K]>> };
type ClientShape = { [K in SignalName]: z.ZodOptional<Values[K]> };

const requestShape = Object.fromEntries(
  SIGNAL_NAMES.map((n) => [n, signalResult(signalValueSchemas[n]).optional()]),
) as unknown as SignalsShape;
const clientShape = Object.fromEntries(SIGNAL_NAMES.map((n) => [n, signalValueSchemas[n].optional()])) as unknown as ClientShape;

/**
 * Request `signals`: signal name → SignalResult. Any signal may be missing
 * (it failed to collect); names we do not know are ignored (stripped).
 */
export const SignalsRequestSchema = z.object(requestShape).openapi({
  title: 'Signals',
  description: 'Map of signal name to `{value, duration}`. Omit a signal that failed to collect; unknown names are ignored.',
});

/** Full-event `signals.client`: the same values without the `{value, duration}` wrapper. */
export const ClientSignalsSchema = z.object(clientShape).openapi({
  title: 'ClientSignals',
  description: 'Collected browser signals, each holding its value content directly.',
});
