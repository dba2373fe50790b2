// Every error the service answers, by its stable code: the status it is
// answered with and, where the spec fixes it, the human text. Every error
// body is `{error, code, ...}`: `error` keeps the spec's text, `code` is
// meant for programs. The server throws by code (`new ApiError('event_not_found')`)
// and the contract documents by code (`errorResponse('event_not_found', …)`),
// so a code, its status and its text live here and nowhere else. Codes
// without a text are answered with a text that names what was wrong
// (`password: too short`, `before: …`): the thrower must give it.

interface ErrorEntry {
  readonly status: number;
  readonly text?: string;
}

export const ERRORS = {
  // 400
  validation_failed: { status: 400 },
  invalid_json: { status: 400, text: 'Invalid JSON body' },
  malformed_body: { status: 400, text: 'Invalid request body' },
  malformed_path: { status: 400, text: 'Malformed percent-escape in the URL path' },
  invalid_cursor: { status: 400 },
  invalid_device_code: { status: 400, text: 'Unknown or malformed device_code' },
  weak_password: { status: 400 },
  invalid_proxy_headers: { status: 400 },
  invalid_rules: { status: 400 },
  invalid_list_entries: { status: 400 },
  // 401
  invalid_api_key: { status: 401, text: 'Invalid or missing API key' },
  invalid_secret_key: { status: 401, text: 'Invalid or missing secret key' },
  not_signed_in: { status: 401, text: 'Not signed in' },
  invalid_credentials: { status: 401, text: 'Invalid email or password' },
  invalid_proxy_secret: { status: 401, text: 'Invalid or revoked proxy secret' },
  // 403
  domain_not_allowed: { status: 403, text: 'Domain not allowed' },
  cross_site_request: { status: 403, text: 'Cross-site request rejected' },
  admin_only: { status: 403, text: 'Administrators only' },
  plan_change_not_allowed: { status: 403, text: 'Plans are assigned by the administrator' },
  signup_not_allowed: { status: 403 },
  invitation_used: { status: 403, text: 'This invitation has already been used' },
  key_not_self_revocable: { status: 403, text: 'Only keys issued to a command-line tool can revoke themselves' },
  role_not_allowed: { status: 403, text: 'Your role does not allow this' },
  no_account: { status: 403, text: 'You are not a member of any account' },
  forbidden: { status: 403, text: 'Forbidden' },
  // 404
  event_not_found: { status: 404, text: 'Event not found' },
  visitor_not_found: { status: 404, text: 'Visitor not found' },
  project_not_found: { status: 404, text: 'Project not found' },
  key_not_found: { status: 404, text: 'API key not found' },
  account_not_found: { status: 404, text: 'Account not found' },
  invitation_not_found: { status: 404, text: 'Invitation not found' },
  member_not_found: { status: 404, text: 'Member not found' },
  webhook_endpoint_not_found: { status: 404, text: 'Webhook endpoint not found' },
  delivery_not_found: { status: 404, text: 'Delivery not found' },
  unknown_user_code: { status: 404, text: 'Unknown code: check the code shown in your terminal' },
  not_found: { status: 404, text: 'Not found' },
  list_not_found: { status: 404, text: 'List not found' },
  ruleset_version_not_found: { status: 404, text: 'No such version of the ruleset' },
  // 409
  email_taken: { status: 409, text: 'Email already registered' },
  already_decided: { status: 409 },
  already_member: { status: 409, text: 'Already a member of this account' },
  last_owner: { status: 409, text: 'An account must keep at least one owner' },
  limit_reached: { status: 409 },
  conflict: { status: 409, text: 'Conflict' },
  ruleset_conflict: { status: 409, text: 'The ruleset changed since the version given: read it again' },
  list_exists: { status: 409 },
  too_many_lists: { status: 409 },
  list_full: { status: 409, text: 'The list would hold more than 100000 entries' },
  list_kind_mismatch: { status: 409 },
  request_id_used: { status: 409, text: 'This requestId was already used for a protected request' },
  // 410
  code_expired: { status: 410, text: 'This code has expired: start again in your terminal' },
  code_used: { status: 410, text: 'This code has already been used' },
  request_id_expired: { status: 410, text: 'This requestId is too old for a protected request' },
  // 413, 415
  body_too_large: { status: 413 },
  unsupported_media_type: { status: 415, text: 'Content-Type must be application/json' },
  // 429
  rate_limit_exceeded: { status: 429, text: 'Rate limit exceeded' },
  monthly_quota_exceeded: { status: 429, text: 'Monthly API call limit exceeded' },
  too_many_attempts: { status: 429 },
  // 5xx
  internal_error: { status: 500 },
  service_unavailable: { status: 503, text: 'Service temporarily unavailable; retry later' },
  // A client error of another kind (a foreign 4xx the server did not raise itself).
  bad_request: { status: 400, text: 'Bad request' },
} as const satisfies Record<string, ErrorEntry>;

export type ErrorCode = keyof typeof ERRORS;

/** The codes whose text is fixed by the table: a thrower may leave the text out. */
export type FixedTextCode = { [K in ErrorCode]: (typeof ERRORS)[K] extends { text: string } ? K : never }[ErrorCode];

/** Every code, in the table's order (the `ErrorCode` enum of the OpenAPI document). */
export const ERROR_CODES = Object.keys(ERRORS) as [ErrorCode, ...ErrorCode[]];

/** The status and fixed text (if any) of a code. */
export const errorEntry = (code: ErrorCode): ErrorEntry => ERRORS[code];
