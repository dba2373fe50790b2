// confidence = 1 − P(this identification is wrong), estimated per path:
//
// - token: the device's own stored token, checked against the fingerprint.
//   P(wrong) 0.005 (a token copied to a look-alike device).
// - exact: every stable component collected is identical. P(wrong) is the
//   chance another device shares all of them: 0.01 at full coverage, rising
//   to 0.05 when only half of the stable weight was collected.
// - fuzzy: linked by similarity. P(wrong) falls linearly from 0.30 at the
//   link threshold to 0.02 at a perfect score, plus up to 0.10 when the lead
//   over the runner-up is thin.
// - new: P(wrong) is the chance the device was seen before but not
//   recognised: 0.01 at full coverage, up to 0.31 when nothing stable was
//   collected (spec: "low values mean many signals failed to collect").
//
// Evidence of tampering or of a privacy browser (which randomise signals)
// doubles P(wrong). The result is rounded to two decimals.
import { LINK_MARGIN, LINK_THRESHOLD } from './matcher.js';

export type MatchKind = 'token' | 'exact' | 'fuzzy' | 'new';

export interface ConfidenceInput {
  kind: MatchKind;
  coverage: number;
  score?: number;
  margin?: number;
  distorted: boolean;
}

export function confidenceOf({ kind, coverage, score = 1, margin = 1, distorted }: ConfidenceInput): number {
  let pWrong: number;
  switch (kind) {
    case 'token':
      pWrong = 0.005;
      break;
    case 'exact':
      pWrong = 0.01 + 0.08 * Math.max(0, 1 - coverage);
      break;
    case 'fuzzy': {
      const t = Math.min(1, Math.max(0, (score - LINK_THRESHOLD) / (1 - LINK_THRESHOLD)));
      const thin = Math.min(1, Math.max(0, (0.2 - margin) / (0.2 - LINK_MARGIN)));
      pWrong = 0.3 - 0.28 * t + 0.1 * thin;
      break;
    }
    case 'new':
      pWrong = 0.01 + 0.3 * Math.max(0, 1 - coverage);
      break;
  }
  if (distorted) pWrong *= 2;
  return Math.round(Math.min(1, Math.max(0, 1 - pWrong)) * 100) / 100;
}
