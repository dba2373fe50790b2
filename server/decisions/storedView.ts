// The view input of an event: what identify knew, as the event records it,
// with its signals (identify passes the ones it holds; a stored event's are
// parsed). One builder for identify and for a preview on stored events.
import type { EventDoc } from '../store/events.js';
import type { ViewInput } from './view.js';

export interface EventSignals {
  client?: ViewInput['client'];
  server?: ViewInput['server'];
}

export function viewInputOf(e: EventDoc, signals: EventSignals = JSON.parse(e.signalsJson) as EventSignals): ViewInput {
  return {
    event: e,
    client: signals.client ?? {},
    server: signals.server ?? null,
    // Events stored before rules existed lack these: their visit's sequence number and time stand in.
    visitCount: e.visitCount ?? e.visitSeq,
    firstSeenAt: e.firstSeenAt ?? e.timestamp,
    linkedIdVouched: e.linkedIdVouched ?? false,
  };
}
