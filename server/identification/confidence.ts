// confidence = 1 − P(this identification is wrong), estimated per path and
// calibrated on bench/accuracy (50k synthetic devices, 319k visits; see
// bench/README.md), where "wrong" means the visitor is not this device's own:
//
// - token: the visitor's own token since its first visit, checked against the
//   fingerprint: P(wrong) 0.005 (a token copied to a look-alike). A token that
//   joined the visitor later came through a fingerprint link and keeps that
//   link's uncertainty: 0.25 (observed 0.21).
// - exact: every stable component collected is identical and the network is
//   one the visitor used; look-alikes on a shared network (offices, carriers)
//   remain: 0.3 at full coverage (observed 0.31), up to 0.45 at the least
//   coverage an exact key needs.
// - fuzzy: linked by similarity (and network). A thin lead over the runner-up
//   predicts errors best, then the score: P(wrong) = 0.36 + 0.15 × (1 − score
//   position above the threshold) + 0.3 × thinness of the lead (observed
//   0.33–0.69 across the buckets).
// - new: P(wrong) is the chance the device was seen before but not
//   recognised: 0.18 with every stable signal collected (observed 0.18);
//   when any is missing (failed, or farbled in a private window or privacy
//   browser) 0.2 + 0.3 × the missing share (spec: "low values mean many
//   signals failed to collect").
//
// Evidence of tampering or of a privacy browser (which randomise signals)
// squares the chance of being right: a small P(wrong) roughly doubles, a
// large one does not exceed 1. The result is rounded to two decimals and
// capped at 0.99: no identification is certain (0.995 would round to 1).
import { LINK_MARGIN, LINK_THRESHOLD } from './matcher.js';

const TOKEN_JOINED_P_WRONG = 0.25;

export type MatchKind = 'token' | 'exact' | 'fuzzy' | 'new';

export interface ConfidenceInput {
  kind: MatchKind;
  coverage: number;
  score?: number;
  margin?: number;
  distorted: boolean;
  /** Token matches: the token joined the visitor through a fingerprint link. */
  joinedByFingerprint?: boolean;
}

export function confidenceOf({ kind, coverage, score = 1, margin = 1, distorted, joinedByFingerprint = false }: ConfidenceInput): number {
  let pWrong: number;
  switch (kind) {
    case 'token':
      pWrong = joinedByFingerprint ? TOKEN_JOINED_P_WRONG : 0.005;
      break;
    case 'exact':
      pWrong = 0.3 + 0.15 * Math.max(0, 1 - coverage);
      break;
    case 'fuzzy': {
      const t = Math.min(1, Math.max(0, (score - LINK_THRESHOLD) / (1 - LINK_THRESHOLD)));
      const thin = Math.min(1, Math.max(0, (0.2 - margin) / (0.2 - LINK_MARGIN)));
      pWrong = 0.36 + 0.15 * (1 - t) + 0.3 * thin;
      break;
    }
    case 'new':
      pWrong = coverage >= 0.999 ? 0.18 : 0.2 + 0.3 * Math.max(0, 1 - coverage);
      break;
  }
  const pRight = Math.min(1, Math.max(0, 1 - pWrong));
  return Math.min(0.99, Math.round((distorted ? pRight * pRight : pRight) * 100) / 100);
}
