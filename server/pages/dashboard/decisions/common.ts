// What the Rules, Lists and Review pages share: the contract's types (types
// only: the bundle carries no schema), the errors a 400 lists one by one,
// and times.
import type { z } from 'zod';
import type { ErrorDetailSchema } from '../../../../contract/common.js';
import type {
  LabelSchema,
  ListEntrySchema,
  ListSchema,
  PreviewSchema,
  ReviewItemSchema,
  RuleSchema,
  RulesetSchema,
  RuleStatsSchema,
} from '../../../../contract/decisions.js';
import type { Answer } from '../../browser/client.js';
import { utcSeconds } from '../types.js';

export type Rule = z.infer<typeof RuleSchema>;
export type Ruleset = z.infer<typeof RulesetSchema>;
export type RuleStat = z.infer<typeof RuleStatsSchema>['rules'][number];
export type Preview = z.infer<typeof PreviewSchema>;
export type List = z.infer<typeof ListSchema>;
export type ListEntry = z.infer<typeof ListEntrySchema>;
export type ReviewItem = z.infer<typeof ReviewItemSchema>;
export type Label = z.infer<typeof LabelSchema>;
export type Detail = z.infer<typeof ErrorDetailSchema>;

/** The `details` of a 400 that names each bad part (invalid_rules, invalid_list_entries). */
export const detailsOf = (res: Answer): Detail[] => (res.body as { details?: Detail[] } | null)?.details ?? [];

/** Unix ms as the dashboard writes times (UTC). */
export const msTime = (ms: number): string => utcSeconds(new Date(ms).toISOString());

/** What each kind of list holds, for people. */
export const KIND_LABELS: Record<List['kind'], string> = {
  visitorId: 'visitor ids',
  linkedId: 'linkedIds',
  ip: 'IP addresses and ranges',
  asn: 'AS numbers',
  country: 'countries',
};
