// How a device code grant can end without a key (spec 3.1; `denied` is our addition).
import { DeviceIdError } from '@deviceid/client';
import type { ErrorDetails } from '@deviceid/client/internal';

export type GrantEnd = 'expired' | 'consumed' | 'denied';

/** The grant ended without a key for this tool; start a new one. */
export class GrantEndedError extends DeviceIdError {
  constructor(
    readonly reason: GrantEnd,
    message: string,
    details: ErrorDetails = {},
  ) {
    super(reason === 'expired' ? 'grant_expired' : reason === 'consumed' ? 'grant_consumed' : 'grant_denied', message, details);
  }
}

/** The 600-second window ran out before the user approved (server 410, or the local deadline). */
export class GrantExpiredError extends GrantEndedError {
  constructor(details: ErrorDetails = {}) {
    super('expired', 'The code expired before it was approved; run the login again', details);
  }
}

/** The key was already handed out (possibly to a poll whose answer was lost); revoke it in the dashboard and start again. */
export class GrantConsumedError extends GrantEndedError {
  constructor(details: ErrorDetails = {}) {
    super('consumed', 'The key of this code was already collected; revoke it under API Keys if that was not you, and run the login again', details);
  }
}

/** The user refused on the consent page. */
export class GrantDeniedError extends GrantEndedError {
  constructor(details: ErrorDetails = {}) {
    super('denied', 'The request was denied on the consent page', details);
  }
}
