// The linker's gap to the oracle, decomposed: every revisit the oracle
// recalls and the linker does not, with its cause. At the visit itself:
// - `no candidate retrieved`: a new visitor, and none of the scored
//   candidates was the device's own first visitor;
// - `below threshold: <term>`: it was scored, as the best candidate, but its
//   probability stayed under LINK_P; <term> is the evidence family that
//   counted most against it (weights × features);
// - `outscored`: it was scored, and another candidate scored higher;
// - `token not believed`: the visit's token named the device's own visitor
//   and the fingerprint disagreed with it;
// - `merge undone`: the visit's token was told apart from its visitor;
// - `linked to another device`: a false merge.
// A visit that goes (by token or fingerprint) to an earlier split of the
// device is lost to that split, whose fate is known at the end of the run:
// - `split not healed yet`: it is merged into the first visitor later;
// - `never healed`: it never is;
// - `healed into the wrong survivor`: it ends merged into another visitor.
import type { FeatureName, Features, Scored } from '../../server/identification/evidence.js';
import { FITTED_WEIGHTS } from '../../server/identification/evidence.js';
import type { Match, VisitorRecord } from '../../server/identification/linker.js';

/** Evidence families, for naming the term that decided a link against. */
const FAMILIES: Record<string, readonly FeatureName[]> = {
  'prior (visit rate)': ['prior', 'away'],
  'rarity (look-alike count)': ['rarity', 'sparse', 'exact', 'soleHolder', 'mobile'],
  storage: ['storage', 'incognito', 'itpDue', 'keptToken'],
  'changed render': ['changedRender'],
  'changed screen': ['changedScreen'],
  'changed volatile': ['changedVolatile'],
  'changed time zone': ['changedTimezone'],
  'changed fonts': ['changedFonts'],
  'changed language': ['changedLanguage', 'changedLanguageAdded'],
  'changed hardware': ['changedHardware'],
  'changed version': ['changedVersion'],
  'changed other': ['changedOther'],
  network: [
    'samePrefix',
    'prefixEvidence',
    'sameAsn',
    'asnEvidence',
    'moved',
    'anonymizer',
    'soleOnPrefix',
    'soleOnAsn',
    'movedSoleDesktop',
    'movedSoleMobile',
    'prefixCrowd',
  ],
  'look-alikes': ['crowd', 'rivalsOnPrefix', 'rivalsOnAsn'],
};

/** The evidence family that counted most against a candidate. */
export function decidingTerm(f: Features): string {
  let worst = '';
  let lowest = Infinity;
  for (const [name, keys] of Object.entries(FAMILIES)) {
    const sum = keys.reduce((t, k) => t + FITTED_WEIGHTS[k] * f[k], 0);
    if (sum < lowest) [worst, lowest] = [name, sum];
  }
  return worst;
}

export const SPLIT_CAUSES = ['split not healed yet', 'never healed', 'healed into the wrong survivor'] as const;

/** A lost revisit's cause, or the split it was lost to (classified at the end of the run). */
export type Lost = { cause: string } | { split: string };

/**
 * Why a revisit missed the device's first visitor. `own` tells whether a
 * visitor was created by this device; `first` is its first visitor as the
 * index resolves it now.
 */
export function lostAt(match: Match, first: string, own: (visitorId: string) => boolean, ownToken: boolean, createdNow: boolean): Lost {
  if (match.separated) return { cause: 'merge undone' };
  if (!own(match.visitorId)) return { cause: 'linked to another device' };
  if (!createdNow) return { split: match.visitorId };
  if (match.tokenRejected && ownToken) return { cause: 'token not believed' };
  const scored: Scored[] = match.scored ?? [];
  const right = scored.find((s) => s.visitorId === first);
  if (!right) return { cause: 'no candidate retrieved' };
  if (scored.some((s) => s.logOdds > right.logOdds)) return { cause: 'outscored' };
  return { cause: `below threshold: ${decidingTerm(right.features)}` };
}

/** The survivor a visitor ends in. */
export function survivorOf(visitors: ReadonlyMap<string, VisitorRecord>, id: string): string {
  const seen = new Set<string>();
  for (let v = visitors.get(id); v?.mergedInto && !seen.has(v.id); v = visitors.get(v.mergedInto)) {
    seen.add(v.id);
    id = v.mergedInto;
  }
  return id;
}

/** What became of a split at the end of the run. */
export function splitFate(visitors: ReadonlyMap<string, VisitorRecord>, split: string, first: string): (typeof SPLIT_CAUSES)[number] {
  const end = survivorOf(visitors, split);
  if (end === first) return 'split not healed yet';
  return end === split ? 'never healed' : 'healed into the wrong survivor';
}
