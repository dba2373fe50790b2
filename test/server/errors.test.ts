// Errors are thrown by code: status and fixed text come from the one table.
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, ERRORS } from '../../contract/errors.js';
import { ApiError } from '../../server/errors.js';

describe('ApiError', () => {
  it("takes its status and text from the table, the thrower's text where the table fixes none", () => {
    const e = new ApiError('event_not_found');
    expect([e.status, e.message, e.code]).toEqual([404, 'Event not found', 'event_not_found']);
    expect(e.body()).toEqual({ error: 'Event not found', code: 'event_not_found' });
    const v = new ApiError('weak_password', 'password: too short');
    expect([v.status, v.message]).toEqual([400, 'password: too short']);
  });

  it('carries extra body fields and headers', () => {
    const e = new ApiError('rate_limit_exceeded', undefined, { usage: 11, limit: 10 }, { 'Retry-After': '1' });
    expect(e.body()).toEqual({ error: 'Rate limit exceeded', code: 'rate_limit_exceeded', usage: 11, limit: 10 });
    expect(e.headers).toEqual({ 'Retry-After': '1' });
  });

  it('has a client or server status for every code', () => {
    for (const code of ERROR_CODES) expect(ERRORS[code].status, code).toBeGreaterThanOrEqual(400);
  });
});
