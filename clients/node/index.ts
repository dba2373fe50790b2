// deviceid/client: typed Node clients for the deviceid service.
export {
  createServerClient,
  type EventSearch,
  type EventSearchPagesQuery,
  type EventSearchResult,
  type EventUpdate,
  type FullEvent,
  type ServerClient,
  type ServerClientOptions,
  type Visit,
  type VisitHistory,
  type VisitorDeletion,
  type VisitPagesQuery,
  type VisitQuery,
} from './server.js';
export { createKeyClient, type KeyClient, type KeyClientOptions, type KeyInfo } from './keys.js';
export {
  createIdentifyClient,
  isSealed,
  type IdentifyClient,
  type IdentifyClientOptions,
  type IdentifyRequest,
  type IdentifyResponse,
  type IdentifyResult,
  type SealedIdentifyResult,
} from './identify.js';
export { LINKED_ID_PROOF_MAX_SECONDS, signLinkedId, type SignLinkedIdOptions } from './linkedIds.js';
export { DEFAULT_MAX_AGE_MS, unseal, UnsealError, type UnsealFailure, type UnsealOptions } from './sealing.js';
export { verifyWebhook, WebhookVerificationError, WEBHOOK_SIGNATURE_HEADER, type VerifyWebhookOptions } from './webhooks.js';
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
