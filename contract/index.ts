// The root router: every endpoint of the service. Server, clients and the
// OpenAPI document are all derived from this object.
import { accountContract } from './account.js';
import { adminContract } from './admin.js';
import { initContract } from './common.js';
import { deviceFlowContract } from './deviceflow.js';
import { eventsContract } from './events.js';
import { healthContract } from './health.js';
import { identifyContract } from './identify.js';
import { sealingContract } from './sealing.js';
import { visitorsContract } from './visitors.js';
import { visitsContract } from './visits.js';
import { webhooksContract } from './webhooks.js';

const c = initContract();

export const contract = c.router({
  health: healthContract,
  identify: identifyContract,
  events: eventsContract,
  visits: visitsContract,
  visitors: visitorsContract,
  deviceFlow: deviceFlowContract,
  account: accountContract,
  admin: adminContract,
  sealing: sealingContract,
  webhooks: webhooksContract,
});

export type Contract = typeof contract;

export * from './account.js';
export * from './admin.js';
export * from './common.js';
export * from './deviceflow.js';
export * from './edge.js';
export * from './events.js';
export * from './identify.js';
export * from './risk.js';
export * from './sealing.js';
export * from './signals.js';
export * from './visitors.js';
export * from './visits.js';
export * from './webhooks.js';
