// The bot verdict's naming rules (server/risk/botVerdict.ts), one per case:
// good only for a name something the sender does not control proves (the
// operator's addresses or DNS, a Web Bot Auth signature); a name that fails
// its operator's check is spoofed and bad; other automation is named by what
// gave it away.
import { describe, expect, it } from 'vitest';
import { botVerdict, type Automation } from '../../../server/risk/botVerdict.js';
import type { EdgeFacts } from '../../../server/risk/edgeFacts.js';

type Claim = NonNullable<EdgeFacts['bot']['claim']>;
const googlebot = (identity: Claim['identity']): Claim => ({
  name: 'Googlebot',
  provider: 'Google',
  category: 'search_crawler',
  identity,
  listDate: '2026-11-20',
});
const none: Automation = { headless: false, automated: false };
const signed = { result: 'signed' as const, agent: 'chatgpt.com' };
const forged = { result: 'invalid' as const, agent: 'chatgpt.com', reason: 'signature does not verify', unverifiable: false };
const unreachable = { result: 'invalid' as const, agent: 'chatgpt.com', reason: 'key directory unreachable', unverifiable: true };

describe('botVerdict', () => {
  it('a human: no claim, no signature, no automation', () => {
    expect(botVerdict({ claim: null, signature: null }, none)).toEqual({ kind: 'human', info: null });
  });

  it('a claimed bot from its operator’s addresses is good and verified, with the list’s date', () => {
    expect(botVerdict({ claim: googlebot('verified'), signature: null }, none)).toEqual({
      kind: 'good',
      info: { category: 'search_crawler', provider: 'Google', name: 'Googlebot', identity: 'verified', confidence: 0.99, listDate: '2026-11-20' },
    });
  });

  it('the same name from elsewhere is bad and spoofed', () => {
    expect(botVerdict({ claim: googlebot('spoofed'), signature: null }, none)).toEqual({
      kind: 'bad',
      info: { category: 'search_crawler', provider: 'Google', name: 'Googlebot', identity: 'spoofed', confidence: 0.95, listDate: '2026-11-20' },
    });
  });

  it('a name nothing proves (its DNS check still pending, or a scraper’s) is bad and unknown, however clean its signals', () => {
    const v = botVerdict({ claim: googlebot('unknown'), signature: null }, none);
    expect(v.kind).toBe('bad');
    expect(v.info).toMatchObject({ identity: 'unknown', confidence: 0.6, name: 'Googlebot' });
  });

  it('a valid signature is good and signed: named by the catalog when its User-Agent is known, else by its agent', () => {
    expect(botVerdict({ claim: null, signature: signed }, none)).toEqual({
      kind: 'good',
      info: { category: 'ai_agent', provider: 'chatgpt.com', name: 'chatgpt.com', identity: 'signed', confidence: 0.99, listDate: null },
    });
    const agent: Claim = { name: 'ChatGPT-User', provider: 'OpenAI', category: 'ai_assistant', identity: 'unknown', listDate: null };
    expect(botVerdict({ claim: agent, signature: signed }, { headless: true, automated: true })).toEqual({
      kind: 'good',
      info: { category: 'ai_assistant', provider: 'OpenAI', name: 'ChatGPT-User', identity: 'signed', confidence: 0.99, listDate: null },
    });
    // A signature does not launder a name its addresses disprove: the agent's own host names it.
    expect(botVerdict({ claim: googlebot('spoofed'), signature: signed }, none).info).toMatchObject({ name: 'chatgpt.com', identity: 'signed' });
  });

  it('a signature that fails its check is a spoofed name, with or without a User-Agent claim', () => {
    expect(botVerdict({ claim: googlebot('verified'), signature: forged }, none)).toMatchObject({
      kind: 'bad',
      info: { identity: 'spoofed', name: 'Googlebot' },
    });
    expect(botVerdict({ claim: null, signature: forged }, none)).toEqual({
      kind: 'bad',
      info: { category: 'ai_agent', provider: 'chatgpt.com', name: 'chatgpt.com', identity: 'spoofed', confidence: 0.95, listDate: null },
    });
  });

  it('a signature whose key directory could not be read proves and disproves nothing', () => {
    expect(botVerdict({ claim: googlebot('verified'), signature: unreachable }, none)).toMatchObject({ kind: 'good', info: { identity: 'verified' } });
    expect(botVerdict({ claim: null, signature: unreachable }, none)).toEqual({ kind: 'human', info: null });
  });

  it('automation without a name: browser automation when headless, unknown automation otherwise', () => {
    expect(botVerdict({ claim: null, signature: null }, { headless: true, automated: true })).toEqual({
      kind: 'bad',
      info: { category: 'browser_automation', provider: null, name: null, identity: 'unknown', confidence: 0.9, listDate: null },
    });
    expect(botVerdict({ claim: null, signature: null }, { headless: false, automated: true })).toEqual({
      kind: 'bad',
      info: { category: 'unknown_automation', provider: null, name: null, identity: 'unknown', confidence: 0.5, listDate: null },
    });
  });
});
