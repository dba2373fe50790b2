// Browser agent entry. Bundled as an IIFE exposing the global `DeviceId`:
//   const agent = await DeviceId.load({ apiKey, endpoint });
//   const result = await agent.get({ linkedId, tag });
import type { IdentifyRequestBody, IdentifyResultBody, LIMITS, SealedIdentifyResultBody } from '@deviceid/contract';
import { collectSignals } from './collect.js';

export { collectSignals };

/** The compact result (`kind: 'result'`), or `{kind: 'sealed', sealedResult}` for a project with sealed results on (forward it to your backend). */
export type IdentifyResult = IdentifyResultBody | SealedIdentifyResultBody;
type IdentifyRequest = IdentifyRequestBody;

/** The contract's URL limit; typed from LIMITS so a change there fails to compile here. */
const URL_CHARS: (typeof LIMITS)['urlChars'] = 2048;

export interface LoadOptions {
  /** A public (live or test) key; sent as X-API-Key. */
  apiKey: string;
  /**
   * Origin (and optional path prefix) of the deviceid server, e.g.
   * "https://id.example.com"; or, through a first-party proxy
   * (@deviceid/proxy), its path on your own site, e.g. "/metrics".
   */
  endpoint: string;
}

export interface GetOptions {
  /** Your id for this event (a user, session or order id): kept on the event and searchable; on its own a tag. */
  linkedId?: string;
  /**
   * Your server's proof of `linkedId` (@deviceid/client `signLinkedId` with the project's linkedId key): with it the
   * linkedId is the signed-in user's, and evidence of who the device is.
   */
  linkedIdProof?: string;
  tag?: Record<string, unknown>;
}

export interface Agent {
  get(options?: GetOptions): Promise<IdentifyResult>;
}

/** A non-2xx identify answer; `body` is the parsed JSON error (or the raw text). */
export class DeviceIdError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {
    const detail = body && typeof body === 'object' && 'error' in body ? `: ${String(body.error)}` : '';
    super(`deviceid identify failed with HTTP ${status}${detail}`);
    this.name = 'DeviceIdError';
  }
}

async function readBody(res: Response): Promise<unknown> {
  const text = await res.text();
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export async function load(options: LoadOptions): Promise<Agent> {
  if (!options || typeof options.apiKey !== 'string' || !options.apiKey) throw new TypeError('DeviceId.load: apiKey is required');
  if (typeof options.endpoint !== 'string' || !options.endpoint) throw new TypeError('DeviceId.load: endpoint is required');
  const url = `${options.endpoint.replace(/\/+$/, '')}/v1/identify`;
  const apiKey = options.apiKey;

  return {
    async get(opts: GetOptions = {}) {
      const timestamp = Date.now();
      const body: IdentifyRequest = {
        signals: await collectSignals(),
        timestamp,
        url: location.href.slice(0, URL_CHARS),
        referrer: document.referrer.slice(0, URL_CHARS),
        ...(opts.linkedId !== undefined && { linkedId: opts.linkedId }),
        ...(opts.linkedIdProof !== undefined && { linkedIdProof: opts.linkedIdProof }),
        ...(opts.tag !== undefined && { tag: opts.tag }),
      };
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-API-Key': apiKey },
        body: JSON.stringify(body),
        // A first-party proxy on the page's own origin gets the site's device cookie
        // (set by the service, HttpOnly); the service's own origin never gets any.
        credentials: 'same-origin',
      });
      const parsed = await readBody(res);
      if (!res.ok) throw new DeviceIdError(res.status, parsed);
      return parsed as IdentifyResult;
    },
  };
}
