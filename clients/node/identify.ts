// The identify client for custom (non-browser) clients: signals in, the
// compact identification result out, with a live or test key.
import type { ClientInferRequest, ClientInferResponseBody } from '@ts-rest/core';
import { identifyContract } from '@deviceid/contract';
import { createRawClient, unwrap, type CallOptions, type ClientOptions, type Credentials } from './transport.js';

/** The identify body: `signals` (name → `{value, duration}`), `timestamp`, optional `url`, `referrer`, `tag`, `linkedId`. */
export type IdentifyRequest = ClientInferRequest<typeof identifyContract.identify>['body'];
export type IdentifyResult = ClientInferResponseBody<typeof identifyContract.identify, 200>;

export interface IdentifyClientOptions extends ClientOptions {
  /** A live (`svc_live_…`) or test (`svc_test_…`) key. */
  apiKey: string;
}

export interface IdentifyClient {
  /**
   * `POST /v1/identify`. Retried only on 429 (refused before any work, so
   * nothing was counted or stored) and on refused connections; any other
   * failure is thrown at once, since the event may have been recorded.
   */
  identify(request: IdentifyRequest, options?: CallOptions): Promise<IdentifyResult>;
}

export function createIdentifyClient(options: IdentifyClientOptions): IdentifyClient {
  const { apiKey } = options;
  if (typeof apiKey !== 'string' || !/^svc_(live|test)_/.test(apiKey)) {
    throw new TypeError('apiKey must be a live or test key (svc_live_… or svc_test_…)');
  }
  const credentials: Credentials = (auth): Record<string, string> => (auth === 'browserKey' ? { 'x-api-key': apiKey } : {});
  const raw = createRawClient({ identify: identifyContract }, options, credentials);
  return {
    identify: (request, call = {}) => unwrap<IdentifyResult>(() => raw.identify.identify({ body: request, call })),
  };
}
