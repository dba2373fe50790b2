// The heap cap our processes start with: sized from the visitor cache, and
// never over an operator's own --max-old-space-size.
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/config.js';
import { heapCapMb, heapFlags, heapFlagsFromEnv } from '../../server/heap.js';
import { TEST_ENV } from '../support/harness.js';

describe('heap cap', () => {
  it('grows with the visitor cache from the heap a process keeps without one', () => {
    expect(heapCapMb(0)).toBe(160);
    expect(heapCapMb(50_000)).toBe(258);
    expect(heapCapMb(1_000_000)).toBe(2114);
    expect(heapFlags(50_000, [], '')).toEqual(['--max-old-space-size=258']);
  });

  it('gives no flag where the operator set one, on the command line or in NODE_OPTIONS, in either spelling', () => {
    expect(heapFlags(50_000, ['--max-old-space-size=1024'], '')).toEqual([]);
    expect(heapFlags(50_000, ['--max_old_space_size=1024'], '')).toEqual([]);
    expect(heapFlags(50_000, [], '--enable-source-maps --max-old-space-size=2048')).toEqual([]);
    expect(heapFlags(50_000, ['--import', 'tsx', '--max-semi-space-size=16'], '--enable-source-maps')).toEqual(['--max-old-space-size=258']);
  });

  it('reads VISITOR_CACHE_SIZE for npm start as config.ts does, and gives no flag for a value config.ts refuses', () => {
    expect(heapFlagsFromEnv({ VISITOR_CACHE_SIZE: '0' })).toEqual(['--max-old-space-size=160']);
    expect(heapFlagsFromEnv({ VISITOR_CACHE_SIZE: ' 200000 ' })).toEqual(['--max-old-space-size=551']);
    expect(heapFlagsFromEnv({ VISITOR_CACHE_SIZE: '1e6' })).toEqual(['--max-old-space-size=2114']);
    expect(heapFlagsFromEnv({})).toEqual(['--max-old-space-size=258']);
    expect(heapFlagsFromEnv({ VISITOR_CACHE_SIZE: '' })).toEqual(['--max-old-space-size=258']);
    for (const bad of ['lots', '-5', '1.5', '20000000']) {
      expect(heapFlagsFromEnv({ VISITOR_CACHE_SIZE: bad })).toEqual([]);
      expect(() => loadConfig({ ...TEST_ENV, VISITOR_CACHE_SIZE: bad })).toThrow(/VISITOR_CACHE_SIZE/);
    }
    expect(loadConfig({ ...TEST_ENV, VISITOR_CACHE_SIZE: '1e6' }).visitorCacheSize).toBe(1_000_000);
    expect(heapFlagsFromEnv({ NODE_OPTIONS: '--max-old-space-size=300' })).toEqual([]);
    // The helper runs without the operator's NODE_OPTIONS and is told them apart.
    expect(heapFlagsFromEnv({}, '--max-old-space-size=300')).toEqual([]);
  });
});
