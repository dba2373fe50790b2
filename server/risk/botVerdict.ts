// Which bot an event is and how far its name is proven (contract/risk.ts
// BotInfo): a name is worth something only when something the sender does not
// control backs it. A User-Agent anyone can write; the operator's published
// addresses, its reverse-and-forward DNS, or a Web Bot Auth signature from a
// key its directory publishes it cannot. So `good` is only ever a verified or
// signed bot; a name that fails its operator's check is `bad` and suspect.
import type { BotCategory, BotIdentity } from '../../contract/risk.js';
import type { EdgeFacts } from './edgeFacts.js';

export interface BotInfo {
  category: BotCategory;
  provider: string | null;
  name: string | null;
  identity: BotIdentity;
  confidence: number;
  listDate: string | null;
}

export interface BotVerdict {
  kind: 'human' | 'good' | 'bad';
  info: BotInfo | null;
}

/** What the agent's signals and the HTTP stack say of automation (risk engine). */
export interface Automation {
  /** Headless, CDP or WebDriver markers, or a headless HTTP stack. */
  headless: boolean;
  /** The combined bot probability fired (≥ 0.5). */
  automated: boolean;
}

/** How sure each way of naming a bot is. */
const CONFIDENCE = { proven: 0.99, spoofed: 0.95, claimed: 0.6, markers: 0.9, probable: 0.5 } as const;

export function botVerdict(bot: EdgeFacts['bot'], a: Automation): BotVerdict {
  const { claim, signature } = bot;
  if (signature?.result === 'signed') {
    // The signing agent's own name when the catalog knows its User-Agent; else the agent's host names it.
    const named = claim && claim.identity !== 'spoofed' ? claim : null;
    return {
      kind: 'good',
      info: {
        category: named?.category ?? 'ai_agent',
        provider: named?.provider ?? signature.agent,
        name: named?.name ?? signature.agent,
        identity: 'signed',
        confidence: CONFIDENCE.proven,
        listDate: null,
      },
    };
  }
  // A signature that fails its check (tampered, expired, replayed, a key its directory does not publish) is a name
  // that fails the verification its operator documents; one whose directory could not be read proves nothing.
  const forged = signature?.result === 'invalid' && !signature.unverifiable;
  if (claim) {
    const identity: BotIdentity = forged ? 'spoofed' : claim.identity;
    const confidence = identity === 'verified' ? CONFIDENCE.proven : identity === 'spoofed' ? CONFIDENCE.spoofed : CONFIDENCE.claimed;
    const info = { category: claim.category, provider: claim.provider, name: claim.name, identity, confidence, listDate: claim.listDate };
    return { kind: identity === 'verified' ? 'good' : 'bad', info };
  }
  if (forged) {
    const info = {
      category: 'ai_agent' as const,
      provider: signature.agent,
      name: signature.agent,
      identity: 'spoofed' as const,
      confidence: CONFIDENCE.spoofed,
      listDate: null,
    };
    return { kind: 'bad', info };
  }
  if (a.headless) return { kind: 'bad', info: unnamed('browser_automation', CONFIDENCE.markers) };
  if (a.automated) return { kind: 'bad', info: unnamed('unknown_automation', CONFIDENCE.probable) };
  return { kind: 'human', info: null };
}

const unnamed = (category: BotCategory, confidence: number): BotInfo => ({
  category,
  provider: null,
  name: null,
  identity: 'unknown',
  confidence,
  listDate: null,
});
