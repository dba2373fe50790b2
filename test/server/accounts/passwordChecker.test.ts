// Password checks in their worker thread: the same verdicts as the policy,
// several at once, the worker gone once idle and back for the next check,
// and checks in flight failing (not hanging) when it stops.
import { afterEach, describe, expect, it } from 'vitest';
import { PasswordChecker } from '../../../server/accounts/passwordChecker.js';
import { passwordWeakness } from '../../../server/accounts/passwordPolicy.js';

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
  const checker = (idleMs?: number) => {
    const c = new PasswordChecker(idleMs);
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
    const c = checker(50);
    expect(c.running).toBe(false);
    expect(await c.weakness('password12', [])).toMatch(/^too easy to guess/);
    await exited(c);
    expect(await c.weakness('quiet-otter-lantern-47', [])).toBeNull();
    expect(c.running).toBe(true);
  }, 30_000);

  it('fails the checks in flight when stopped, and works again afterwards', async () => {
    const c = checker();
    const inFlight = c.weakness('password12', []);
    await c.stop();
    await expect(inFlight).rejects.toThrow(/exited/);
    expect(await c.weakness('password12', [])).toMatch(/^too easy to guess/);
  }, 30_000);
});
