// The presented key describing or revoking itself (`GET`/`DELETE /v1/keys/self`):
// what `deviceid status` and `deviceid logout` call. Any active key may read
// itself; only keys the device code flow issued may revoke themselves.
import type { ClientInferResponseBody } from '@ts-rest/core';
import { keysContract } from '@deviceid/contract';
import { createRawClient, unwrap, type CallOptions, type ClientOptions, type Credentials } from './transport.js';

export type KeyInfo = ClientInferResponseBody<typeof keysContract.getSelf, 200>['apiKey'];

export interface KeyClientOptions extends ClientOptions {
  /** Any key: live, test or secret. */
  apiKey: string;
}

export interface KeyClient {
  /** `GET /v1/keys/self`: the key's id, name, type, project, hint and dates. AuthError once it no longer works. */
  self(options?: CallOptions): Promise<KeyInfo>;
  /** `DELETE /v1/keys/self`: revokes a key the device flow issued (others: AuthError with status 403). */
  revokeSelf(options?: CallOptions): Promise<KeyInfo>;
}

export function createKeyClient(options: KeyClientOptions): KeyClient {
  const { apiKey } = options;
  if (typeof apiKey !== 'string' || !/^svc_(live|test|secret)_/.test(apiKey))
    throw new TypeError('apiKey must be a deviceid key (svc_live_…, svc_test_… or svc_secret_…)');
  const credentials: Credentials = (auth): Record<string, string> => (auth === 'anyKey' ? { 'x-api-key': apiKey } : {});
  const raw = createRawClient({ keys: keysContract }, options, credentials);
  return {
    self: async (call = {}) => (await unwrap<{ apiKey: KeyInfo }>(() => raw.keys.getSelf({ call }))).apiKey,
    revokeSelf: async (call = {}) => (await unwrap<{ apiKey: KeyInfo }>(() => raw.keys.revokeSelf({ call }))).apiKey,
  };
}
