import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { buildAgent } from '../../../server/http/agentScript.js';
import { hashString, murmur128 } from '../../../clients/agent/hash.js';
import { collectors } from '../../../clients/agent/signals/index.js';
import { EXTRA_SIGNAL_NAMES, SIGNAL_NAMES, SPEC_SIGNAL_NAMES, signalValueSchemas } from '../../../contract/signals.js';

describe('signal catalogue', () => {
  it("has exactly the spec's 41 signals plus the named optional extras, each with a collector", () => {
    expect(SPEC_SIGNAL_NAMES).toHaveLength(41);
    expect(new Set(SPEC_SIGNAL_NAMES).size).toBe(41);
    expect(EXTRA_SIGNAL_NAMES).toEqual(['fontMetrics']);
    expect([...SIGNAL_NAMES].sort()).toEqual([...SPEC_SIGNAL_NAMES, ...EXTRA_SIGNAL_NAMES].sort());
    expect(Object.keys(collectors).sort()).toEqual([...SIGNAL_NAMES].sort());
  });

  it('marks the extras as optional extras in their descriptions', () => {
    for (const name of EXTRA_SIGNAL_NAMES) expect(signalValueSchemas[name].description, name).toMatch(/^Optional extra signal:/);
  });

  it('describes every signal, saying whether it is stable or volatile', () => {
    for (const name of SIGNAL_NAMES) expect(signalValueSchemas[name].description, name).toMatch(/\b(stable|volatile)\b/i);
  });
});

describe('agent hash (MurmurHash3 x86 128)', () => {
  it('passes the SMHasher verification value 0xB3ECE62A', () => {
    // SMHasher: hash keys 0..255 bytes long (key[i] = i) with seed 256 - len,
    // concatenate the little-endian outputs, hash that with seed 0.
    const key = Uint8Array.from({ length: 256 }, (_, i) => i);
    const all = new Uint8Array(256 * 16);
    for (let len = 0; len < 256; len++) {
      murmur128(key.subarray(0, len), 256 - len).forEach((word, w) => {
        for (let b = 0; b < 4; b++) all[len * 16 + w * 4 + b] = (word >>> (8 * b)) & 0xff;
      });
    }
    expect(murmur128(all, 0)[0]).toBe(0xb3ece62a);
  });

  it('hashes strings to 32 hex characters', () => {
    expect(hashString('')).toBe('0'.repeat(32));
    expect(hashString('deviceid')).toMatch(/^[0-9a-f]{32}$/);
    expect(hashString('deviceid')).not.toBe(hashString('deviceiD'));
  });
});

describe('agent bundle', () => {
  it('builds one minified IIFE under 30 KB gzipped without module syntax or zod', async () => {
    const js = await buildAgent();
    const gzipped = gzipSync(js).length;
    expect(gzipped).toBeLessThan(30 * 1024);
    expect(js).toMatch(/^"use strict";var DeviceId=\(\(\)=>\{/);
    expect(js).not.toContain('require(');
    expect(js).not.toMatch(/(^|[;\s])import[\s{*("']/);
    expect(js).not.toMatch(/(^|[;\s])export[\s{*]/);
    expect(js).not.toMatch(/zod|ZodObject/i);
  });
});
