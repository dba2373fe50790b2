// ULIDs for the ids the server creates (requestIds, visitors, keys, …).
// The ulid package draws each of a ULID's 16 random characters with its own
// crypto.getRandomValues call; identify makes three ULIDs, and those 48
// calls were 3 % of the server's CPU under load. Here the random bytes come
// from the same CSPRNG, drawn 4 KB at a time.
import { randomFillSync } from 'node:crypto';
import { ulid as makeUlid } from 'ulid';

const pool = new Uint8Array(4096);
let next = pool.length;

/** A uniform fraction in [0, 1) from one random byte: the ulid package's own PRNG contract (it needs 5 bits a character). */
function random(): number {
  if (next === pool.length) {
    randomFillSync(pool);
    next = 0;
  }
  return pool[next++]! / 256;
}

/** A new ULID for `time` (ms; now when absent). */
export const ulid = (time?: number): string => makeUlid(time, random);
