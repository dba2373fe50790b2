// @deviceid/cli: the device code flow for command-line tools, and the key
// storage `deviceid login` uses.
export { authorizeDevice, type AuthorizeDeviceOptions, type AuthorizeDeviceResult, type PollState, type Verification } from './authorize.js';
export { GrantConsumedError, GrantDeniedError, GrantEndedError, GrantExpiredError, type GrantEnd } from './errors.js';
export { noBrowserReason, openInBrowser } from './browser.js';
export {
  API_KEY_ENV,
  CREDENTIALS_ENV,
  checkWritable,
  credentialsPath,
  CredentialsFileError,
  loadApiKey,
  loadCredential,
  removeCredential,
  saveCredential,
  type StoredCredential,
} from './credentials.js';
export { EXIT, keyHint, run, type CliIo } from './main.js';
export {
  AbortedError,
  DeviceIdError,
  NetworkError,
  RateLimitError,
  ServerError,
  TimeoutError,
  UnexpectedResponseError,
  ValidationError,
} from '@deviceid/client';
