// signLinkedId (deviceid/client): the proof format the service checks, and clear errors for what it cannot sign.
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { LINKED_ID_PROOF_MAX_SECONDS, signLinkedId } from '@deviceid/client';

const KEY = `lid_${Buffer.alloc(32, 7).toString('base64url')}`;
const NOW = 1_768_478_400_000;

describe('signLinkedId', () => {
  it('signs "<expiry>.<linkedId>" with the key, valid for a day by default', () => {
    const proof = signLinkedId(KEY, 'user-42', { now: NOW });
    const expiry = NOW / 1000 + 86_400;
    const mac = createHmac('sha256', Buffer.alloc(32, 7)).update(`${expiry}.user-42`).digest('base64url');
    expect(proof).toBe(`v1.${expiry}.${mac}`);
    expect(signLinkedId(KEY, 'user-42', { now: NOW, ttlSeconds: 60 })).toMatch(new RegExp(`^v1\\.${NOW / 1000 + 60}\\.`));
  });

  it('refuses a key, linkedId or lifetime it cannot sign with', () => {
    expect(() => signLinkedId('lid_short', 'user-42')).toThrow(/linkedId key/);
    expect(() => signLinkedId(`svc_${KEY.slice(4)}`, 'user-42')).toThrow(TypeError);
    expect(() => signLinkedId(KEY, '')).toThrow(/1 to 256/);
    expect(() => signLinkedId(KEY, 'x'.repeat(257))).toThrow(/1 to 256/);
    expect(() => signLinkedId(KEY, 'user-42', { ttlSeconds: 0 })).toThrow(/ttlSeconds/);
    expect(() => signLinkedId(KEY, 'user-42', { ttlSeconds: LINKED_ID_PROOF_MAX_SECONDS + 1 })).toThrow(/ttlSeconds/);
    expect(signLinkedId(KEY, 'x'.repeat(256), { ttlSeconds: LINKED_ID_PROOF_MAX_SECONDS })).toMatch(/^v1\./);
  });
});
