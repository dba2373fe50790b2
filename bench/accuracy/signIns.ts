// Signed-in visits: a site with user accounts sends its own account id with
// identify (the linkedId). People own several devices (a phone and a laptop,
// sometimes a tablet), and families share one account on all their devices,
// identical phones included. A device's other browsers and profiles are its
// owner's (the same account); another person at a shared computer has the
// household's shared account, or one of their own. From random streams of
// their own, so that the rest of a world's visits are the same with and
// without them.
import { digest, rng, type Born, type Rng } from './population.js';
import type { World } from './world.js';

export class SignIns {
  /** The customer account each device signs in to; null for a device never signed in. */
  readonly accountOf: (number | null)[];
  private readonly streams: Rng[];

  constructor(
    born: readonly Born[],
    seed: number,
    private readonly world: World,
  ) {
    this.accountOf = born.map(() => null);
    const byHousehold = new Map<number, number[]>();
    for (const { device } of born)
      if (!device.sibling) (byHousehold.get(device.household) ?? byHousehold.set(device.household, []).get(device.household)!).push(device.id);
    const r = rng(Math.imul(seed + 104_729, 0x9e3779b1));
    let accounts = 0;
    /** Households with accounts: the one they share, or null for one per person. */
    const householdAccount = new Map<number, number | null>();
    for (const [household, devices] of byHousehold) {
      if (r() >= world.signIn.households) continue;
      if (r() < world.signIn.shared) {
        // One account for the whole household.
        const account = accounts++;
        householdAccount.set(household, account);
        for (const dev of devices) this.accountOf[dev] = account;
        continue;
      }
      householdAccount.set(household, null);
      // Each person's 1–3 devices.
      for (let k = 0; k < devices.length;) {
        const own = 1 + (r() < 0.45 ? 1 : 0) + (r() < 0.15 ? 1 : 0);
        const account = accounts++;
        for (const dev of devices.slice(k, k + own)) this.accountOf[dev] = account;
        k += own;
      }
    }
    for (const { device: d } of born) {
      if (d.sibling === 'person') this.accountOf[d.id] = householdAccount.has(d.household) ? (householdAccount.get(d.household) ?? accounts++) : null;
      else if (d.sibling) this.accountOf[d.id] = this.accountOf[d.physical] ?? null;
    }
    this.streams = born.map((_, dev) => rng(Math.imul(seed + 15_485_863, 0x85ebca6b) ^ Math.imul(dev + 1, 0x27d4eb2f)));
  }

  /** The linkedId of the device's next visit (called once per visit, in the device's order): signed in on a share of them. */
  visit(dev: number): string | null {
    const account = this.accountOf[dev];
    const signedIn = this.streams[dev]!() < this.world.signIn.visits;
    return account !== null && account !== undefined && signedIn ? digest('account', account, 0) : null;
  }
}
