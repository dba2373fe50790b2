// Password strength at sign-up: zxcvbn-ts estimates how many guesses a
// password takes against common-password lists, English words and names,
// keyboard patterns, sequences, repeats, dates and the user's own email and
// name; we require score 3 ("safely unguessable", about 10^8 guesses) and
// say why a password falls short.
import { ZxcvbnFactory } from '@zxcvbn-ts/core';
import * as common from '@zxcvbn-ts/language-common';
import * as en from '@zxcvbn-ts/language-en';

export const MIN_PASSWORD_SCORE = 3;

/**
 * Characters zxcvbn looks at, and its l33t-substitution budget: beyond these
 * it costs hundreds of ms of CPU per check on hostile input, for no better
 * verdict (a long password's first 64 characters decide its strength).
 */
const MAX_CHECKED_CHARS = 64;
const MAX_L33T_SUBSTITUTIONS = 10;

let checker: ZxcvbnFactory | undefined;
/** Built on first use: loading the dictionaries takes about 0.2 s. */
const zxcvbn = () =>
  (checker ??= new ZxcvbnFactory({
    dictionary: { ...common.dictionary, ...en.dictionary },
    graphs: common.adjacencyGraphs,
    translations: en.translations,
    maxLength: MAX_CHECKED_CHARS,
    l33tMaxSubstitutions: MAX_L33T_SUBSTITUTIONS,
  }));

/** Why a password is too weak (for a 400 naming the field), or null when it is strong enough. */
export function passwordWeakness(password: string, personal: readonly string[]): string | null {
  const inputs = ['deviceid', ...personal.flatMap((p) => [p, ...p.split(/[@.\s_+-]+/)]).filter((p) => p.length >= 3)];
  const result = zxcvbn().check(password, inputs);
  if (result.score >= MIN_PASSWORD_SCORE) return null;
  const why = result.feedback.warning ?? result.feedback.suggestions[0] ?? 'Add another word or two. Uncommon words are better.';
  return `too easy to guess. ${why}`;
}
