// Open redirects after sign-in (`/login?next=`): only same-origin paths,
// checked after normalisation. The bypass list gathers the usual open
// redirect payloads (dot segments that collapse into `//host`, encoded dots
// and slashes, backslashes, control characters, schemes, user-info); each
// must either be refused or come back as a path on our own origin.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NEXT_MAX_CHARS, safeNext } from '../../../server/pages/next.js';
import { signUp, type Customer } from '../../support/dashboard.js';
import { createHarness, type Harness } from '../../support/harness.js';

const ORIGIN = 'https://id.example.com';

/** Payloads that must be refused outright. */
const REFUSED = [
  // the audit's finding: dot segments collapse into a protocol-relative URL
  '/.//evil.example/phish',
  '/..//evil.example/x',
  '/%2e//evil.example',
  '/%2E%2E//evil.example',
  '/a/..//evil.example',
  '/a/b/../..//evil.example',
  '/././/evil.example',
  // protocol-relative and backslash forms
  '//evil.example',
  '///evil.example',
  '////evil.example/',
  '/\\evil.example',
  '/\\/evil.example',
  '\\/evil.example',
  '/./\\evil.example',
  '/a\\..\\..\\/evil.example',
  // tabs and newlines are dropped by URL parsers
  '/\t/evil.example',
  '/\n/evil.example',
  '/\r\n/evil.example',
  '/\u0000/evil.example',
  '/x\u007f',
  // absolute URLs, schemes, relative paths and user-info
  'https://evil.example/',
  'http:evil.example',
  'https:/evil.example',
  'javascript:alert(1)',
  'data:text/html,<script>alert(1)</script>',
  ' //evil.example',
  'evil.example',
  'cli/auth',
  '@evil.example',
  '',
];

/** Odd-looking payloads that are harmless paths on our origin, with what they become. */
const KEPT: [string, string][] = [
  ['/dashboard', '/dashboard'],
  ['/cli/auth?code=BCDF-GHJK', '/cli/auth?code=BCDF-GHJK'],
  ['/a/../dashboard', '/dashboard'],
  ['/%2f%2fevil.example', '/%2f%2fevil.example'],
  ['/%5cevil.example', '/%5cevil.example'],
  ['/.%2fevil.example', '/.%2fevil.example'],
  ['/@evil.example', '/@evil.example'],
  ['/?next=//evil.example', '/?next=//evil.example'],
  ['/#//evil.example', '/#//evil.example'],
  ['/..', '/'],
  ['/\u3002evil.example', '/%E3%80%82evil.example'],
];

describe('safeNext', () => {
  it.each(REFUSED)('refuses %j', (raw) => {
    expect(safeNext(raw, ORIGIN)).toBeNull();
  });

  it.each(KEPT)('keeps %j as %j, a path of our origin', (raw, expected) => {
    const result = safeNext(raw, ORIGIN);
    expect(result).toBe(expected);
    expect(new URL(result!, ORIGIN).origin).toBe(ORIGIN);
  });

  it('refuses a missing value and one longer than the limit', () => {
    expect(safeNext(null, ORIGIN)).toBeNull();
    expect(safeNext(undefined, ORIGIN)).toBeNull();
    const path = '/' + 'a'.repeat(NEXT_MAX_CHARS - 1);
    expect(safeNext(path, ORIGIN)).toBe(path);
    expect(safeNext(path + 'a', ORIGIN)).toBeNull();
  });
});

describe('GET /login?next= when signed in', () => {
  let h: Harness;
  let c: Customer;
  beforeAll(async () => {
    h = await createHarness(import.meta.filename);
    c = await signUp(h);
  });
  afterAll(async () => {
    await h.close();
  });

  it.each(REFUSED.filter(Boolean))('does not redirect to %j', async (raw) => {
    const res = await c.agent.get(`/login?next=${encodeURIComponent(raw)}`);
    expect(res.status).toBe(200);
    expect(res.headers.location).toBeUndefined();
  });

  it('redirects to a same-origin path (303)', async () => {
    const res = await c.agent.get(`/login?next=${encodeURIComponent('/a/../dashboard?x=1')}`);
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe('/dashboard?x=1');
  });
});
