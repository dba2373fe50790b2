// The key presenting itself: what `deviceid status` shows and `deviceid
// logout` revokes. Any active key may read itself; only keys the device flow
// issued (source `cli`) may revoke themselves, since live and test keys are
// also published in web pages, where anyone could otherwise revoke them.
import { z } from 'zod';
import { commonErrorResponses, described, errorResponse, initContract, meta } from './common.js';
import { ApiKeySchema } from './account.js';

const c = initContract();

const invalidKey = errorResponse('invalid_api_key', 'Missing, unknown or revoked key');

export const keysContract = c.router(
  {
    getSelf: {
      method: 'GET',
      path: '/v1/keys/self',
      summary: 'Describe the presented key',
      description:
        'Any active key (live, test or secret) in `X-API-Key`, or a secret key in `Authorization: Bearer`: its id, name, type, project, hint and dates. A 401 means the key no longer works. Not metered.',
      responses: {
        200: described(z.object({ apiKey: ApiKeySchema }).openapi({ title: 'KeySelf', description: 'The presented key.' }), 'The presented key'),
        ...commonErrorResponses,
        401: invalidKey,
      },
      metadata: meta({ auth: 'anyKey' }),
    },
    revokeSelf: {
      method: 'DELETE',
      path: '/v1/keys/self',
      summary: 'Revoke the presented key (device-flow keys only)',
      description:
        'Revokes the key in `X-API-Key` if the device code flow issued it (`source: cli`), as `deviceid logout` does. Keys created in the dashboard are revoked there: 403.',
      responses: {
        200: described(
          z.object({ apiKey: ApiKeySchema }).openapi({ title: 'KeyRevoked', description: 'The key, now revoked.' }),
          'The key is revoked; it answers 401 from now on',
        ),
        ...commonErrorResponses,
        401: invalidKey,
        403: errorResponse('key_not_self_revocable', 'The key was created in the dashboard'),
      },
      metadata: meta({ auth: 'anyKey' }),
    },
  },
  { strictStatusCodes: true },
);
