// What counts as a suspect in the overview's hourly counts, as a plain
// constant (no zod), so that the dashboard's browser bundle can say it
// without the contract's schemas.

/** From this suspect score on, when it was identified (or flagged then), an identification counts as a suspect. */
export const SUSPECT_SCORE_COUNTED = 50;
