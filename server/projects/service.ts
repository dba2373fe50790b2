import { ulid } from '../ids.js';
import { ACCOUNT_LIMITS } from '../../contract/account.js';
import { projectView } from '../accounts/views.js';
import type { AuditLog } from '../audit/log.js';
import type { Clock } from '../clock.js';
import { ApiError } from '../errors.js';
import type { Store } from '../store/index.js';

const dedupe = (domains: string[]) => [...new Set(domains)];

export class ProjectsService {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly audit: AuditLog,
  ) {}

  async list(accountId: string) {
    return (await this.store.projects.listForAccount(accountId)).map(projectView);
  }

  async create(accountId: string, name: string, allowedDomains: string[] = []) {
    const doc = { _id: `prj_${ulid()}`, accountId, name, allowedDomains: dedupe(allowedDomains), createdAt: new Date(this.clock.now()) };
    const created = await this.audit.change(
      accountId,
      'project.create',
      { target: { type: 'project', id: doc._id }, after: { name: doc.name, allowedDomains: doc.allowedDomains } },
      (stamp) => this.store.projects.insertBounded(doc, ACCOUNT_LIMITS.projects, stamp),
    );
    if (!created) throw new ApiError('limit_reached', `An account can have at most ${ACCOUNT_LIMITS.projects} projects`);
    return projectView(doc);
  }

  async update(accountId: string, projectId: string, patch: { name?: string; allowedDomains?: string[]; linkedIdEvidence?: boolean }) {
    const before = await this.store.projects.ofAccount(accountId, projectId);
    if (!before) throw new ApiError('project_not_found');
    const set: { name?: string; allowedDomains?: string[]; linkedIdEvidence?: boolean } = {};
    if (patch.name !== undefined) set.name = patch.name;
    if (patch.allowedDomains !== undefined) set.allowedDomains = dedupe(patch.allowedDomains);
    if (patch.linkedIdEvidence !== undefined) set.linkedIdEvidence = patch.linkedIdEvidence;
    // Only the fields that change (an allowlist edit, a rename); none: nothing happens.
    const [was, will] = [projectView(before), projectView({ ...before, ...set })];
    const changed = (Object.keys(set) as (keyof typeof set)[]).filter((k) => JSON.stringify(was[k]) !== JSON.stringify(will[k]));
    const pick = (v: typeof was) => Object.fromEntries(changed.map((k) => [k, v[k]]));
    const doc = !changed.length
      ? before
      : await this.audit.change(accountId, 'project.update', { target: { type: 'project', id: projectId }, before: pick(was), after: pick(will) }, (stamp) =>
          this.store.projects.update(projectId, set, stamp),
        );
    if (!doc) throw new ApiError('project_not_found');
    return projectView(doc);
  }
}
