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

/** Built once (loading the dictionaries takes about 0.1 s). */
const zxcvbn = new ZxcvbnFactory({
  dictionary: { ...common.dictionary, ...en.dictionary },
  graphs: common.adjacencyGraphs,
  translations: en.translations,
  maxLength: MAX_CHECKED_CHARS,
  l33tMaxSubstitutions: MAX_L33T_SUBSTITUTIONS,
});

/**
 * Why a password is too weak (for a 400 naming the field: zxcvbn's warning
 * and suggestions), or null when it is strong enough. `personal`: the user's
 * email, name and the like, which the password must not be built from.
 */
export function passwordWeakness(password: string, personal: readonly (string | undefined)[]): string | null {
  const known = personal.filter((p): p is string => p !== undefined);
  const result = zxcvbn.check(password, ['deviceid', ...known, ...known.flatMap((p) => p.split(/[@.\s_+-]/))]);
  if (result.score >= MIN_PASSWORD_SCORE) return null;
  return ['too easy to guess.', result.feedback.warning, ...result.feedback.suggestions].filter(Boolean).join(' ');
}
