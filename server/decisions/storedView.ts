// The view input of a stored event, for rules run after identify (a preview):
// what identify knew at the time, as far as the event recorded it.
import type { EventDoc } from '../store/events.js';
import type { ViewInput } from './view.js';

export function viewInputOf(e: EventDoc): ViewInput {
  const signals = JSON.parse(e.signalsJson) as { client?: ViewInput['client']; server?: ViewInput['server'] };
  return {
    event: e,
    client: signals.client ?? {},
    server: signals.server ?? null,
    visitCount: e.visitCount ?? e.visitSeq,
    firstSeenAt: e.firstSeenAt ?? e.timestamp,
    linkedIdVouched: e.linkedIdVouched ?? false,
  };
}
