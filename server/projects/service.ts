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
    if (!(await this.store.projects.insertBounded(doc, ACCOUNT_LIMITS.projects))) {
      throw new ApiError('limit_reached', `An account can have at most ${ACCOUNT_LIMITS.projects} projects`);
    }
    await this.audit.record(accountId, 'project.create', {
      target: { type: 'project', id: doc._id },
      after: { name: doc.name, allowedDomains: doc.allowedDomains },
    });
    return projectView(doc);
  }

  async update(accountId: string, projectId: string, patch: { name?: string; allowedDomains?: string[]; linkedIdEvidence?: boolean }) {
    const before = await this.store.projects.ofAccount(accountId, projectId);
    if (!before) throw new ApiError('project_not_found');
    const set: { name?: string; allowedDomains?: string[]; linkedIdEvidence?: boolean } = {};
    if (patch.name !== undefined) set.name = patch.name;
    if (patch.allowedDomains !== undefined) set.allowedDomains = dedupe(patch.allowedDomains);
    if (patch.linkedIdEvidence !== undefined) set.linkedIdEvidence = patch.linkedIdEvidence;
    const doc = Object.keys(set).length ? await this.store.projects.update(projectId, set) : await this.store.projects.byId(projectId);
    if (!doc) throw new ApiError('project_not_found');
    // Only the fields that changed (an allowlist edit, a rename); none: nothing happened.
    const changed = (Object.keys(set) as (keyof typeof set)[]).filter((k) => JSON.stringify(projectView(before)[k]) !== JSON.stringify(projectView(doc)[k]));
    if (changed.length) {
      const pick = (p: typeof doc) => Object.fromEntries(changed.map((k) => [k, projectView(p)[k]]));
      await this.audit.record(accountId, 'project.update', { target: { type: 'project', id: projectId }, before: pick(before), after: pick(doc) });
    }
    return projectView(doc);
  }
}
