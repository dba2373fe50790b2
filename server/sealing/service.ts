// Sealed results per project: the dashboard turns sealing on (a new key,
// shown once), rotates or turns it off; identify seals the compact result
// with the key of the project document it already read (no extra read).
import type { AuditLog } from '../audit/log.js';
import { randomBytes } from 'node:crypto';
import type { z } from 'zod';
import type { IdentifyResultSchema } from '../../contract/identify.js';
import type { SealedIdentifyResultSchema } from '../../contract/sealing.js';
import type { Clock } from '../clock.js';
import { ApiError } from '../errors.js';
import type { StoredDecision } from '../store/events.js';
import type { ProjectDoc } from '../store/projects.js';
import type { Store } from '../store/index.js';
import { SEALING_KEY_BYTES, sealResult } from './format.js';
import type { SecretBox } from './secretBox.js';

type IdentifyResult = z.infer<typeof IdentifyResultSchema>;
type SealedIdentifyResult = z.infer<typeof SealedIdentifyResultSchema>;

const view = (p: Pick<ProjectDoc, 'sealing'>) => ({ enabled: Boolean(p.sealing), since: p.sealing ? p.sealing.since.toISOString() : null });

export class SealingService {
  constructor(
    private readonly store: Store,
    private readonly box: SecretBox,
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

  /** Turns sealing on with a new key (or rotates it): the key, base64, returned only here. */
  async createKey(accountId: string, projectId: string) {
    const before = await this.project(accountId, projectId);
    const key = randomBytes(SEALING_KEY_BYTES);
    const sealing = { key: this.box.seal(key), since: new Date(this.clock.now()) };
    await this.audit.change(
      accountId,
      'sealing.key_create',
      { target: { type: 'project', id: projectId }, before: { sealed: Boolean(before.sealing) }, after: { sealed: true } },
      (stamp) => this.store.projects.setSealing(projectId, sealing, stamp),
    );
    return { ...view({ sealing }), key: key.toString('base64') };
  }

  async disable(accountId: string, projectId: string) {
    const before = await this.project(accountId, projectId);
    if (!before.sealing) await this.store.projects.setSealing(projectId, null);
    else
      await this.audit.change(
        accountId,
        'sealing.disable',
        { target: { type: 'project', id: projectId }, before: { sealed: true }, after: { sealed: false } },
        (stamp) => this.store.projects.setSealing(projectId, null, stamp),
      );
    return view({ sealing: null });
  }

  /** Identify's answer: the compact result, or sealed when the project says so. */
  respond(project: ProjectDoc | null, result: IdentifyResult, decision?: StoredDecision): IdentifyResult | SealedIdentifyResult {
    if (!project?.sealing) return result;
    // Sealed as identify would have answered it unsealed (`kind: 'result'`), with the decision for the site's server.
    return { sealedResult: sealResult({ kind: 'result', ...result, ...(decision && { decision }) }, this.box.open(project.sealing.key)) };
  }
}
