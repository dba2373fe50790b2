// The project's linkedId key (contract/linkedIds.ts): created or rotated from
// the dashboard, shown once, revoked. Nothing secret is stored: the key is
// derived from the server's secret, the project and the version kept here
// (server/keys/linkedIds.ts), so a rotation is the next version.
import type { AuditLog } from '../audit/log.js';
import type { Clock } from '../clock.js';
import { ApiError } from '../errors.js';
import type { LinkedIdKeys } from '../keys/linkedIds.js';
import type { Store } from '../store/index.js';
import type { ProjectDoc } from '../store/projects.js';

const view = (p: Pick<ProjectDoc, 'linkedIdKey'>) => ({ enabled: Boolean(p.linkedIdKey), since: p.linkedIdKey ? p.linkedIdKey.since.toISOString() : null });

export class LinkedIdKeyService {
  constructor(
    private readonly store: Store,
    private readonly keys: LinkedIdKeys,
    private readonly clock: Clock,
    private readonly audit: AuditLog,
  ) {}

  private async project(accountId: string, projectId: string) {
    const project = await this.store.projects.ofAccount(accountId, projectId);
    if (!project) throw new ApiError('project_not_found');
    return project;
  }

  async status(accountId: string, projectId: string) {
    return view(await this.project(accountId, projectId));
  }

  /** A new key (the next version: the previous one ends at once), returned only here. */
  async create(accountId: string, projectId: string) {
    const before = await this.project(accountId, projectId);
    // Versions only grow, a revoked key's included, so that no key is ever handed out twice.
    const linkedIdKey = { version: Math.max(before.linkedIdKey?.version ?? 0, before.linkedIdKeyVersions ?? 0) + 1, since: new Date(this.clock.now()) };
    await this.audit.change(
      accountId,
      'linked_id_key.create',
      { target: { type: 'project', id: projectId }, before: { enabled: Boolean(before.linkedIdKey) }, after: { enabled: true } },
      (stamp) => this.store.projects.setLinkedIdKey(projectId, linkedIdKey, stamp),
    );
    return { ...view({ linkedIdKey }), key: this.keys.key(projectId, linkedIdKey.version) };
  }

  async revoke(accountId: string, projectId: string) {
    const before = await this.project(accountId, projectId);
    if (!before.linkedIdKey) await this.store.projects.setLinkedIdKey(projectId, null);
    else
      await this.audit.change(
        accountId,
        'linked_id_key.revoke',
        { target: { type: 'project', id: projectId }, before: { enabled: true }, after: { enabled: false } },
        (stamp) => this.store.projects.setLinkedIdKey(projectId, null, stamp),
      );
    return view({ linkedIdKey: null });
  }
}
