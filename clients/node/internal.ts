// @deviceid/client/internal: the transport and error helpers @deviceid/cli is
// built on. Not a stable API: use the package's main entry.
export {
  createRawClient,
  createFetcher,
  normalizeBaseUrl,
  sleep,
  unwrap,
  type Credentials,
  type Fetcher,
  type FetchLike,
  type RawClient,
  type RawClientArgs,
  type RawResponse,
} from './transport.js';
export { errorFromResponse, parseRetryAfter, type ErrorDetails } from './errors.js';
