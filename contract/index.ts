// The root router: every endpoint of the service. Server, clients and the
// OpenAPI document are all derived from this object.
import { accountContract } from './account.js';
import { adminContract } from './admin.js';
import { initContract } from './common.js';
import { dashboardDecisionsContract, decisionsContract, enforcementContract } from './decisions.js';
import { demoContract } from './demo.js';
import { deviceFlowContract } from './deviceflow.js';
import { eventsContract } from './events.js';
import { explorerContract } from './explorer.js';
import { healthContract } from './health.js';
import { identifyContract } from './identify.js';
import { proxyContract } from './proxy.js';
import { linkedIdsContract } from './linkedIds.js';
import { sealingContract } from './sealing.js';
import { visitorsContract } from './visitors.js';
import { keysContract } from './keys.js';
import { membersContract } from './members.js';
import { visitsContract } from './visits.js';
import { webhooksContract } from './webhooks.js';

const c = initContract();

/**
 * Spelled out so that declarations name each area's type instead of
 * expanding the whole router (which made index.d.ts 1.2 MB).
 */
// A type alias (not an interface): ts-rest's AppRouter needs the implicit index signature.
export type Contract = {
  health: typeof healthContract;
  identify: typeof identifyContract;
  events: typeof eventsContract;
  visits: typeof visitsContract;
  visitors: typeof visitorsContract;
  keys: typeof keysContract;
  deviceFlow: typeof deviceFlowContract;
  account: typeof accountContract;
  demo: typeof demoContract;
  admin: typeof adminContract;
  sealing: typeof sealingContract;
  linkedIds: typeof linkedIdsContract;
  webhooks: typeof webhooksContract;
  explorer: typeof explorerContract;
  proxy: typeof proxyContract;
  members: typeof membersContract;
  decisions: typeof decisionsContract;
  dashboardDecisions: typeof dashboardDecisionsContract;
  enforcement: typeof enforcementContract;
};

export const contract: Contract = c.router({
  health: healthContract,
  identify: identifyContract,
  events: eventsContract,
  visits: visitsContract,
  visitors: visitorsContract,
  keys: keysContract,
  deviceFlow: deviceFlowContract,
  account: accountContract,
  demo: demoContract,
  admin: adminContract,
  sealing: sealingContract,
  linkedIds: linkedIdsContract,
  webhooks: webhooksContract,
  explorer: explorerContract,
  proxy: proxyContract,
  members: membersContract,
  decisions: decisionsContract,
  dashboardDecisions: dashboardDecisionsContract,
  enforcement: enforcementContract,
});

export * from './account.js';
export * from './admin.js';
export * from './common.js';
export * from './decisions.js';
export * from './demo.js';
export * from './deviceflow.js';
export * from './edge.js';
export * from './errors.js';
export * from './events.js';
export * from './explorer.js';
export * from './identify.js';
export * from './keys.js';
export * from './members.js';
export * from './proxy.js';
export * from './risk.js';
export * from './sealing.js';
export * from './linkedIds.js';
export * from './signals.js';
export * from './suspects.js';
export * from './visitors.js';
export * from './visits.js';
export * from './webhooks.js';

// Plain types of the main payloads, for code that does not want zod in its signatures.
import type { z } from 'zod';
import type { IdentifyRequestSchema, IdentifyResultAnswerSchema, SealedIdentifyResultAnswerSchema } from './identify.js';
export type IdentifyRequestBody = z.infer<typeof IdentifyRequestSchema>;
/** Identify's answer (`kind: 'result'`), also what an unsealed result holds. */
export type IdentifyResultBody = z.infer<typeof IdentifyResultAnswerSchema>;
/** Identify's answer for a project with sealed results on (`kind: 'sealed'`). */
export type SealedIdentifyResultBody = z.infer<typeof SealedIdentifyResultAnswerSchema>;
