// Protected requests (@deviceid/client `protect()`, the proxy's protected
// paths): the page sends the requestId identify gave it with the request it
// protects, the site's server claims it here. A requestId serves one
// protected request: the first claim answers the decision, every later one
// 409 (a replay), and an event older than the caller's maxAge 410.
import type { z } from 'zod';
import { CLAIM_MAX_AGE_SECONDS, type ClaimSchema } from '../../contract/decisions.js';
import type { Clock } from '../clock.js';
import { ApiError } from '../errors.js';
import type { ApiKeyDoc } from '../store/apiKeys.js';
import { NO_DECISION } from '../store/events.js';
import type { Store } from '../store/index.js';
import type { VisitorAliases } from '../visitors/aliases.js';

type Claim = z.infer<typeof ClaimSchema>;

/** Claims older than the longest maxAge a claim may give are swept. */
export const CLAIM_MAX_AGE_MS = CLAIM_MAX_AGE_SECONDS * 1000;

export class ClaimsService {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly aliases: VisitorAliases,
  ) {}

  async claim(key: ApiKeyDoc, requestId: string, maxAgeSeconds: number): Promise<Claim> {
    const event = await this.store.events.get(requestId);
    if (!event || event.accountId !== key.accountId || event.projectId !== key.projectId) throw new ApiError('event_not_found');
    const now = this.clock.now();
    // The age is checked first: an old requestId is refused without using it up.
    if (now - event.timestamp > maxAgeSeconds * 1000) throw new ApiError('request_id_expired');
    if (!(await this.store.claims.claim(requestId, key.accountId, new Date(now)))) throw new ApiError('request_id_used');
    const visitorId = (await this.aliases.survivor(key.accountId, event.visitorId))?._id ?? event.visitorId;
    return {
      requestId,
      visitorId,
      timestamp: event.timestamp,
      decision: event.decision ?? NO_DECISION,
      confidence: event.confidence,
      suspectScore: event.suspectScore,
      botProbability: event.botProbability,
      ...(event.linkedId !== null && { linkedId: event.linkedId }),
    };
  }
}
