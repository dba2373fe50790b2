// deviceid/client: typed Node clients for the deviceid service.
export { createServerClient, type EventSearch, type EventSearchResult, type EventUpdate, type FullEvent, type ServerClient, type ServerClientOptions, type Visit, type VisitHistory, type VisitPagesQuery, type VisitQuery } from './server.js';
export { createKeyClient, type KeyClient, type KeyClientOptions, type KeyInfo } from './keys.js';
export { createIdentifyClient, type IdentifyClient, type IdentifyClientOptions, type IdentifyRequest, type IdentifyResult } from './identify.js';
export type { CallOptions, ClientOptions, FetchLike } from './transport.js';
export {
  AbortedError,
  AuthError,
  DeviceIdError,
  NetworkError,
  NotFoundError,
  RateLimitError,
  ServerError,
  TimeoutError,
  UnexpectedResponseError,
  ValidationError,
  type DeviceIdErrorCode,
} from './errors.js';
