// The identify client for custom (non-browser) clients: signals in, the
// compact identification result out, with a live or test key.
import type { ClientInferRequest } from '@ts-rest/core';
import { identifyContract, type IdentifyResultBody, type SealedIdentifyResultBody } from '@deviceid/contract';
import { UnexpectedResponseError } from './errors.js';
import { createRawClient, unwrap, type CallOptions, type ClientOptions, type Credentials } from './transport.js';

/** The identify body: `signals` (name → `{value, duration}`), `timestamp`, optional `url`, `referrer`, `tag`, `linkedId`. */
export type IdentifyRequest = ClientInferRequest<typeof identifyContract.identify>['body'];
/** The compact identification result. */
export type IdentifyResult = IdentifyResultBody;
/** What identify answers for a project with sealed results on: open it with `unseal`. */
export type SealedIdentifyResult = SealedIdentifyResultBody;
/** Either answer of identify. */
export type IdentifyResponse = IdentifyResult | SealedIdentifyResult;

export const isSealed = (r: IdentifyResponse): r is SealedIdentifyResult => typeof (r as SealedIdentifyResult).sealedResult === 'string';

export interface IdentifyClientOptions extends ClientOptions {
  /** A live (`svc_live_…`) or test (`svc_test_…`) key. */
  apiKey: string;
}

export interface IdentifyClient {
  /**
   * `POST /v1/identify`. Retried only on 429 (refused before any work, so
   * nothing was counted or stored) and on refused connections; any other
   * failure is thrown at once, since the event may have been recorded.
   * For a project with sealed results on, throws UnexpectedResponseError
   * (use `identifyResponse`).
   */
  identify(request: IdentifyRequest, options?: CallOptions): Promise<IdentifyResult>;
  /** `POST /v1/identify`, answering the compact result or, with sealing on, `{sealedResult}` (see `isSealed`). */
  identifyResponse(request: IdentifyRequest, options?: CallOptions): Promise<IdentifyResponse>;
}

export function createIdentifyClient(options: IdentifyClientOptions): IdentifyClient {
  const { apiKey } = options;
  if (typeof apiKey !== 'string' || !/^svc_(live|test)_/.test(apiKey)) {
    throw new TypeError('apiKey must be a live or test key (svc_live_… or svc_test_…)');
  }
  const credentials: Credentials = (auth): Record<string, string> => (auth === 'browserKey' ? { 'x-api-key': apiKey } : {});
  const raw = createRawClient({ identify: identifyContract }, options, credentials);
  const identifyResponse = (request: IdentifyRequest, call: CallOptions = {}) => unwrap<IdentifyResponse>(() => raw.identify.identify({ body: request, call }));
  return {
    identifyResponse,
    identify: async (request, call = {}) => {
      const r = await identifyResponse(request, call);
      if (isSealed(r))
        throw new UnexpectedResponseError(
          'unexpected_response',
          'POST /v1/identify answered a sealed result (sealing is on for the project); use identifyResponse and unseal it on your backend',
        );
      return r;
    },
  };
}
