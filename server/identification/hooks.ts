// What other modules add to identify without touching its pipeline: the
// answer (sealed results, server/sealing/), entries written with the event
// (a webhook outbox entry) and work started once it is stored (webhook
// delivery, server/webhooks/). Each receives the project document identify
// has already read, so none costs a read of its own.
import type { z } from 'zod';
import type { IdentifyResultSchema } from '../../contract/identify.js';
import type { SealedIdentifyResultSchema } from '../../contract/sealing.js';
import type { OutboxEntry } from '../store/eventIndex.js';
import type { EventDoc, StoredDecision } from '../store/events.js';
import type { EventSignals } from '../decisions/storedView.js';
import type { ProjectDoc } from '../store/projects.js';

export type IdentifyResponse = z.infer<typeof IdentifyResultSchema> | z.infer<typeof SealedIdentifyResultSchema>;

export interface IdentifyHooks {
  /** Entries written in the same insertMany as the event's search entries. */
  withEvent?(project: ProjectDoc | null, event: EventDoc): OutboxEntry[];
  /** Called (not awaited) once the event is stored. */
  stored?(project: ProjectDoc | null, event: EventDoc): void;
  /** The answer: the compact result, or a form of it. */
  respond?(project: ProjectDoc | null, result: z.infer<typeof IdentifyResultSchema>, decision: StoredDecision | undefined): IdentifyResponse;
  /** The project's rules on the event, before it is stored (server/decisions/), with the signals identify holds unparsed. */
  decide?(project: ProjectDoc | null, event: EventDoc, signals: EventSignals): Promise<StoredDecision>;
}
