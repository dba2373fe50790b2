// MurmurHash3 x86 128-bit (Austin Appleby's public-domain algorithm), written
// with 32-bit integer math so it needs neither BigInt nor a dependency.

const C1 = 0x239b961b;
const C2 = 0xab0e9789;
const C3 = 0x38b34ae5;
const C4 = 0xa1e38b93;

const rotl = (x: number, r: number): number => (x << r) | (x >>> (32 - r));

function fmix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}

const word = (b: Uint8Array, i: number): number => (b[i]! | (b[i + 1]! << 8) | (b[i + 2]! << 16) | (b[i + 3]! << 24)) >>> 0;

/** The four 32-bit output words h1..h4 (unsigned). */
export function murmur128(bytes: Uint8Array, seed = 0): [number, number, number, number] {
  const len = bytes.length;
  const blocks = len - (len % 16);
  let h1 = seed >>> 0;
  let h2 = h1;
  let h3 = h1;
  let h4 = h1;

  for (let i = 0; i < blocks; i += 16) {
    let k1 = word(bytes, i);
    let k2 = word(bytes, i + 4);
    let k3 = word(bytes, i + 8);
    let k4 = word(bytes, i + 12);

    k1 = Math.imul(rotl(Math.imul(k1, C1), 15), C2);
    h1 ^= k1;
    h1 = rotl(h1, 19) + h2;
    h1 = (Math.imul(h1, 5) + 0x561ccd1b) | 0;

    k2 = Math.imul(rotl(Math.imul(k2, C2), 16), C3);
    h2 ^= k2;
    h2 = rotl(h2, 17) + h3;
    h2 = (Math.imul(h2, 5) + 0x0bcaa747) | 0;

    k3 = Math.imul(rotl(Math.imul(k3, C3), 17), C4);
    h3 ^= k3;
    h3 = rotl(h3, 15) + h4;
    h3 = (Math.imul(h3, 5) + 0x96cd1c35) | 0;

    k4 = Math.imul(rotl(Math.imul(k4, C4), 18), C1);
    h4 ^= k4;
    h4 = rotl(h4, 13) + h1;
    h4 = (Math.imul(h4, 5) + 0x32ac3b17) | 0;
  }

  // Tail: up to 15 bytes, packed little-endian into k1..k4.
  const k = [0, 0, 0, 0];
  for (let i = blocks; i < len; i++) {
    const j = i - blocks;
    k[j >> 2]! |= bytes[i]! << ((j & 3) * 8);
  }
  const rest = len - blocks;
  if (rest > 12) h4 ^= Math.imul(rotl(Math.imul(k[3]!, C4), 18), C1);
  if (rest > 8) h3 ^= Math.imul(rotl(Math.imul(k[2]!, C3), 17), C4);
  if (rest > 4) h2 ^= Math.imul(rotl(Math.imul(k[1]!, C2), 16), C3);
  if (rest > 0) h1 ^= Math.imul(rotl(Math.imul(k[0]!, C1), 15), C2);

  h1 ^= len;
  h2 ^= len;
  h3 ^= len;
  h4 ^= len;
  h1 = (h1 + h2 + h3 + h4) | 0;
  h2 = (h2 + h1) | 0;
  h3 = (h3 + h1) | 0;
  h4 = (h4 + h1) | 0;
  h1 = fmix(h1);
  h2 = fmix(h2);
  h3 = fmix(h3);
  h4 = fmix(h4);
  h1 = (h1 + h2 + h3 + h4) | 0;
  h2 = (h2 + h1) | 0;
  h3 = (h3 + h1) | 0;
  h4 = (h4 + h1) | 0;
  return [h1 >>> 0, h2 >>> 0, h3 >>> 0, h4 >>> 0];
}

const hex = (n: number): string => ('0000000' + n.toString(16)).slice(-8);

/** 32 lowercase hex characters. */
export function hashBytes(bytes: Uint8Array): string {
  return murmur128(bytes).map(hex).join('');
}

/** Hash of a string's UTF-8 bytes. */
export function hashString(text: string): string {
  return hashBytes(new TextEncoder().encode(text));
}

/** Hash of any JSON-serialisable value. */
export const hashJson = (value: unknown): string => hashString(JSON.stringify(value));
