// Password checks in their worker thread: the same verdicts as the policy,
// several at once, the worker gone once idle and back for the next check,
// checks in flight failing (not hanging) when it stops, at most so many
// pending, and a stuck check failing with its worker replaced.
import { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { PasswordChecker, type PasswordCheckerOptions } from '../../../server/accounts/passwordChecker.js';
import { passwordWeakness } from '../../../server/accounts/passwordPolicy.js';
import { ApiError } from '../../../server/errors.js';

const exited = (checker: PasswordChecker) =>
  new Promise<void>((resolve) => {
    const poll = setInterval(() => {
      if (checker.running) return;
      clearInterval(poll);
      resolve();
    }, 5);
  });

describe('PasswordChecker', () => {
  const made: PasswordChecker[] = [];
  const checker = (options: Partial<PasswordCheckerOptions> = {}) => {
    const c = new PasswordChecker({ maxPending: 100, timeoutMs: 10_000, ...options });
    made.push(c);
    return c;
  };
  afterEach(async () => {
    await Promise.all(made.map((c) => c.stop()));
    made.length = 0;
  });

  it('answers as the policy does, for several checks in flight at once', async () => {
    const c = checker();
    const cases: [string, string[]][] = [
      ['password12', []],
      ['correct horse battery', ['someone@example.com']],
      ['quintavion2024', ['zorblax.quintavion@example.com', 'Zorblax Quintavion']],
      ['Summer2024!', []],
      ['quiet-otter-lantern-47', []],
    ];
    const answers = await Promise.all(cases.map(([p, personal]) => c.weakness(p, personal)));
    expect(answers).toEqual(cases.map(([p, personal]) => passwordWeakness(p, personal)));
    expect(answers.filter((a) => a === null)).toHaveLength(2);
  }, 30_000);

  it('starts its worker on the first check, stops it once idle, and starts it again for the next', async () => {
    const c = checker({ idleMs: 50 });
    expect(c.running).toBe(false);
    expect(await c.weakness('password12', [])).toMatch(/^too easy to guess/);
    await exited(c);
    expect(await c.weakness('quiet-otter-lantern-47', [])).toBeNull();
    expect(c.running).toBe(true);
  }, 30_000);

  it('fails the checks in flight when stopped, and works again afterwards', async () => {
    const c = checker();
    const inFlight = expect(c.weakness('password12', [])).rejects.toThrow(/exited/);
    await c.stop();
    await inFlight;
    expect(await c.weakness('password12', [])).toMatch(/^too easy to guess/);
  }, 30_000);

  it('refuses a check beyond maxPending at once with 503 and Retry-After, and takes checks again once they are done', async () => {
    const c = checker({ maxPending: 2 });
    const held = [c.weakness('password12', []), c.weakness('password12', [])];
    const refused = await c.weakness('quiet-otter-lantern-47', []).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(ApiError);
    expect(refused).toMatchObject({ status: 503, code: 'service_unavailable', headers: { 'Retry-After': '1' } });
    expect(await Promise.all(held)).toEqual([expect.stringMatching(/^too easy/), expect.stringMatching(/^too easy/)]);
    expect(await c.weakness('quiet-otter-lantern-47', [])).toBeNull();
  }, 30_000);

  it('fails a check that outruns timeoutMs with 503, and replaces the stuck worker for the checks behind it', async () => {
    // A worker that never answers 'stuck' (busy for ever, as zxcvbn on pathological input would be).
    const started: Worker[] = [];
    const stuckOn = () => {
      const w = new Worker(
        `const { parentPort } = require('node:worker_threads');
         parentPort.on('message', ({ password }) => { if (password === 'stuck') for (;;); parentPort.postMessage({ weakness: 'weak: ' + password }); });
         parentPort.postMessage('ready');`,
        { eval: true },
      );
      started.push(w);
      return w;
    };
    const c = checker({ timeoutMs: 200, startWorker: stuckOn });
    const stuck = c.weakness('stuck', []).catch((err: unknown) => err);
    const behind = c.weakness('fine', []);
    expect(await stuck).toMatchObject({ status: 503, code: 'service_unavailable', headers: { 'Retry-After': '1' } });
    expect(await behind).toBe('weak: fine');
    expect(started).toHaveLength(2);
    expect(started[0]!.threadId).toBe(-1); // terminated
  }, 30_000);
});
