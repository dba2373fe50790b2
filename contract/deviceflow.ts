// Device code flow for command-line tools (spec 2.9, 3.1, 4.1, 4.2; RFC 8628 style).
import { z } from 'zod';
import { initContract, commonErrorResponses, ErrorSchema, meta } from './common.js';

const c = initContract();

export const DEVICE_CODE_TTL_SECONDS = 600;
export const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';

export const ClientNameSchema = z
  .string()
  .transform((s) => s.trim())
  .pipe(
    z
      .string()
      .min(1, 'must not be empty')
      .max(64, 'must be at most 64 characters')
      // eslint-disable-next-line no-control-regex
      .regex(/^[^\u0000-\u001f\u007f-\u009f]*$/, 'must not contain control characters'),
  )
  .describe('Human-readable name of the tool, shown on the consent page (1–64 characters after trimming)');

export const DeviceCodeRequestSchema = z.object({ client_name: ClientNameSchema }).openapi({ title: 'DeviceCodeRequest' });

export const DeviceCodeGrantSchema = z
  .object({
    device_code: z.string().length(64).describe('Opaque secret the tool polls with; never shown to the user'),
    user_code: z.string().regex(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/).openapi({ example: 'BCDF-GHJK' }),
    verification_url: z.string().url().describe('{base_url}/cli/auth?code=<user_code>'),
    expires_in: z.literal(DEVICE_CODE_TTL_SECONDS),
    interval: z.number().int().min(1).describe('Minimum seconds between polls'),
  })
  .openapi({ title: 'DeviceCodeGrant' });

export const TokenRequestSchema = z.object({ device_code: z.string() }).openapi({ title: 'TokenRequest' });

export const TokenPendingSchema = z
  .object({ status: z.literal('pending'), interval: z.number().int().min(1) })
  .openapi({ title: 'TokenPending', description: 'Not yet authorized; poll again after `interval` seconds. Polling too fast raises `interval` by 5.' });
export const TokenAuthorizedSchema = z
  .object({ status: z.literal('authorized'), api_key: z.string().describe('Plaintext live key, returned exactly once') })
  .openapi({ title: 'TokenAuthorized' });
export const TokenEndedSchema = z
  .object({ status: z.enum(['expired', 'consumed', 'denied']) })
  .openapi({
    title: 'TokenEnded',
    description: '`expired`: the 600 s window elapsed. `consumed`: the key was already returned. `denied` (our addition): the user refused. In every case start a new grant.',
  });

export const deviceFlowContract = c.router(
  {
    createDeviceCode: {
      method: 'POST',
      path: '/api/cli/device-code',
      summary: 'Start a device code grant',
      body: DeviceCodeRequestSchema,
      responses: {
        200: DeviceCodeGrantSchema,
        ...commonErrorResponses,
        429: ErrorSchema.describe('Too many grants started from this IP; retry after `Retry-After` seconds'),
      },
      metadata: meta({ auth: 'public' }),
    },
    pollToken: {
      method: 'POST',
      path: '/api/cli/token',
      summary: 'Poll a device code grant for its key',
      body: TokenRequestSchema,
      responses: {
        200: z.union([TokenPendingSchema, TokenAuthorizedSchema]),
        ...commonErrorResponses,
        400: ErrorSchema.describe('Unknown or malformed device_code'),
        410: TokenEndedSchema,
      },
      metadata: meta({ auth: 'public' }),
    },
  },
  { strictStatusCodes: true },
);
