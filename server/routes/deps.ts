// What every route module receives: the app's dependencies and its services.
import type { Request } from 'express';
import type { AdminService } from '../accounts/admin.js';
import type { AccountsService } from '../accounts/service.js';
import type { DeletionService } from '../deletion/service.js';
import type { DeviceFlowService } from '../deviceflow/service.js';
import type { ExplorerService } from '../explorer/service.js';
import type { AppDeps } from '../http/app.js';
import type { IdentificationService } from '../identification/service.js';
import type { KeysService } from '../keys/service.js';
import type { Meter } from '../metering/meter.js';
import type { ProjectsService } from '../projects/service.js';
import type { SealingService } from '../sealing/service.js';
import type { EventSearchService } from '../search/service.js';
import type { WebhooksService } from '../webhooks/service.js';
import type { EdgeFacts } from '../risk/edgeFacts.js';

export interface Services {
  accounts: AccountsService;
  admin: AdminService;
  keys: KeysService;
  projects: ProjectsService;
  meter: Meter;
  identification: IdentificationService;
  deviceFlow: DeviceFlowService;
  search: EventSearchService;
  /** The dashboard's events explorer and visitor timeline. */
  explorer: ExplorerService;
  deletions: DeletionService;
  sealing: SealingService;
  webhooks: WebhooksService;
  /** What the edge knows about the request (IP, location, network, TLS, HTTP); a 503 ApiError when the cluster primary does not answer. */
  edge(req: Request): Promise<EdgeFacts>;
  /** The client's IP as the edge sees it (TRUST_PROXY aware). */
  clientIp(req: Request): string;
}

export type RouteDeps = AppDeps & { services: Services };
