// Machine-readable error codes. Every error body is `{error, code, ...}`:
// `error` keeps the human text the spec gives, `code` is stable and meant for
// programs. The server derives the code from the status and the text with
// errorCode() (one place: the error type's body), so adding a code never
// changes a text and a text change that would lose its code fails a test.

export const ERROR_CODES = [
  // 400
  'validation_failed',
  'invalid_json',
  'malformed_body',
  'malformed_path',
  'invalid_cursor',
  'invalid_device_code',
  'weak_password',
  'invalid_proxy_headers',
  // 401
  'invalid_api_key',
  'invalid_secret_key',
  'not_signed_in',
  'invalid_credentials',
  'invalid_proxy_secret',
  // 403
  'domain_not_allowed',
  'cross_site_request',
  'admin_only',
  'plan_change_not_allowed',
  'signup_not_allowed',
  'invitation_used',
  'key_not_self_revocable',
  'forbidden',
  // 404
  'event_not_found',
  'visitor_not_found',
  'project_not_found',
  'key_not_found',
  'account_not_found',
  'invitation_not_found',
  'webhook_endpoint_not_found',
  'delivery_not_found',
  'unknown_user_code',
  'not_found',
  // 409
  'email_taken',
  'already_decided',
  'limit_reached',
  'conflict',
  // 410
  'code_expired',
  'code_used',
  // 413, 415
  'body_too_large',
  'unsupported_media_type',
  // 429
  'rate_limit_exceeded',
  'monthly_quota_exceeded',
  'too_many_attempts',
  // 5xx
  'internal_error',
  'service_unavailable',
  // Any other 4xx
  'bad_request',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** Texts (exact, or a prefix ending in a space or colon) and their codes. */
const BY_TEXT: ReadonlyArray<readonly [number, string | RegExp, ErrorCode]> = [
  [400, 'Invalid JSON body', 'invalid_json'],
  [400, /^Malformed compressed body$|^Request aborted$|^Invalid request body$/, 'malformed_body'],
  [400, 'Malformed percent-escape in the URL path', 'malformed_path'],
  [400, /^before: /, 'invalid_cursor'],
  [400, 'Unknown or malformed device_code', 'invalid_device_code'],
  [400, /^password: /, 'weak_password'],
  [400, /^deviceid-proxy-/, 'invalid_proxy_headers'],
  [401, 'Invalid or missing API key', 'invalid_api_key'],
  [401, 'Invalid or missing secret key', 'invalid_secret_key'],
  [401, 'Not signed in', 'not_signed_in'],
  [401, 'Invalid email or password', 'invalid_credentials'],
  [401, 'Invalid or revoked proxy secret', 'invalid_proxy_secret'],
  [403, 'Domain not allowed', 'domain_not_allowed'],
  [403, 'Cross-site request rejected', 'cross_site_request'],
  [403, 'Administrators only', 'admin_only'],
  [403, 'Plans are assigned by the administrator', 'plan_change_not_allowed'],
  [403, 'This invitation has already been used', 'invitation_used'],
  [403, 'Only keys issued to a command-line tool can revoke themselves', 'key_not_self_revocable'],
  [403, /[Ss]ign-?up|invitation/, 'signup_not_allowed'],
  [404, 'Event not found', 'event_not_found'],
  [404, 'Visitor not found', 'visitor_not_found'],
  [404, 'Project not found', 'project_not_found'],
  [404, 'API key not found', 'key_not_found'],
  [404, 'Account not found', 'account_not_found'],
  [404, 'Invitation not found', 'invitation_not_found'],
  [404, 'Webhook endpoint not found', 'webhook_endpoint_not_found'],
  [404, 'Delivery not found', 'delivery_not_found'],
  [404, /^Unknown code/, 'unknown_user_code'],
  [409, 'Email already registered', 'email_taken'],
  [409, /^You already /, 'already_decided'],
  [409, /at most/, 'limit_reached'],
  [410, /expired/, 'code_expired'],
  [410, /already been used/, 'code_used'],
  [413, /./, 'body_too_large'],
  [415, /./, 'unsupported_media_type'],
  [429, 'Rate limit exceeded', 'rate_limit_exceeded'],
  [429, 'Monthly API call limit exceeded', 'monthly_quota_exceeded'],
  [429, /./, 'too_many_attempts'],
];

const BY_STATUS: Record<number, ErrorCode> = {
  400: 'validation_failed',
  401: 'invalid_api_key',
  403: 'forbidden',
  404: 'not_found',
  409: 'conflict',
  410: 'code_expired',
  413: 'body_too_large',
  415: 'unsupported_media_type',
  429: 'too_many_attempts',
};

/** The stable code of an error answer, from its status and its text. */
export function errorCode(status: number, message: string): ErrorCode {
  for (const [s, text, code] of BY_TEXT) {
    if (s !== status) continue;
    if (typeof text === 'string' ? text === message : text.test(message)) return code;
  }
  if (status >= 500) return status === 503 ? 'service_unavailable' : 'internal_error';
  return BY_STATUS[status] ?? 'bad_request';
}
