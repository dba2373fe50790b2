// Creating, listing and revoking API keys of a project. The plaintext is
// returned once by `create` and never stored.
import { ulid } from '../ids.js';
import { ACCOUNT_LIMITS } from '../../contract/account.js';
import type { AuditLog } from '../audit/log.js';
import type { Clock } from '../clock.js';
import { apiKeyView } from '../accounts/views.js';
import { ApiError } from '../errors.js';
import type { ApiKeyDoc, ApiKeyType } from '../store/apiKeys.js';
import type { Store } from '../store/index.js';
import { generateKey, hashKey, keyHint } from './format.js';

const DAY_MS = 24 * 3600_000;

/** What the audit log keeps of a key: never its value (the hint is the prefix and last four characters). */
const keyFacts = (k: ReturnType<typeof apiKeyView>) => ({
  name: k.name,
  type: k.type,
  projectId: k.projectId,
  hint: k.hint,
  source: k.source,
  status: k.status,
});

export class KeysService {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly audit: AuditLog,
  ) {}

  private async project(accountId: string, projectId: string) {
    const project = await this.store.projects.ofAccount(accountId, projectId);
    if (!project) throw new ApiError('project_not_found');
    return project;
  }

  async create(accountId: string, projectId: string, name: string, type: ApiKeyType, source: ApiKeyDoc['source'] = 'dashboard') {
    await this.project(accountId, projectId);
    return this.issue(accountId, projectId, name, type, source);
  }

  /**
   * Issues a key for a project already known to belong to the account, within the account's limits.
   * `by`: who it is recorded as made by when not the request's actor (the member who approved a device grant).
   */
  async issue(accountId: string, projectId: string, name: string, type: ApiKeyType, source: ApiKeyDoc['source'], by?: Parameters<AuditLog['record']>[3]) {
    const now = new Date(this.clock.now());
    const today = await this.store.attempts.takeAll([{ key: `keys:${accountId}`, max: ACCOUNT_LIMITS.keysPerDay, windowMs: DAY_MS }], now);
    if (!today.ok) {
      const retryAfter = String(Math.ceil(today.retryAfterMs / 1000));
      throw new ApiError(
        'too_many_attempts',
        `At most ${ACCOUNT_LIMITS.keysPerDay} keys can be created a day; try again tomorrow`,
        {},
        { 'Retry-After': retryAfter },
      );
    }
    const key = generateKey(type);
    const doc: ApiKeyDoc = {
      _id: hashKey(key),
      id: `key_${ulid()}`,
      accountId,
      projectId,
      name,
      type,
      status: 'active',
      hint: keyHint(key),
      source,
      createdAt: now,
      lastUsedAt: null,
      revokedAt: null,
    };
    const view = apiKeyView(doc);
    const inserted = await this.audit.change(
      accountId,
      'key.create',
      { target: { type: 'key', id: doc.id }, after: keyFacts(view) },
      (stamp) => this.store.apiKeys.insertBounded(doc, ACCOUNT_LIMITS.activeKeysPerProject, stamp),
      by,
    );
    if (!inserted) {
      await this.store.attempts.release(today.slots);
      throw new ApiError('limit_reached', `A project can have at most ${ACCOUNT_LIMITS.activeKeysPerProject} active keys; revoke one first`);
    }
    return { apiKey: view, key };
  }

  async list(accountId: string, projectId: string) {
    await this.project(accountId, projectId);
    return (await this.store.apiKeys.listForProject(projectId)).map(apiKeyView);
  }

  /** `DELETE /v1/keys/self`: a device-flow key revokes itself. */
  async revokeSelf(key: ApiKeyDoc) {
    if (key.source !== 'cli') throw new ApiError('key_not_self_revocable');
    const doc = await this.store.apiKeys.ofProject(key.projectId, key.id);
    if (!doc) throw new ApiError('invalid_api_key');
    return this.revoked(doc);
  }

  async revoke(accountId: string, projectId: string, keyId: string) {
    await this.project(accountId, projectId);
    const doc = await this.store.apiKeys.ofProject(projectId, keyId);
    if (!doc) throw new ApiError('key_not_found');
    return this.revoked(doc);
  }

  /** Recorded once: when this call revoked it (revoking again answers the same and changes nothing). */
  private async revoked(doc: ApiKeyDoc) {
    if (doc.status === 'revoked') return apiKeyView(doc);
    const now = new Date(this.clock.now());
    const after = keyFacts(apiKeyView({ ...doc, status: 'revoked', revokedAt: now }));
    const revoked = await this.audit.change(
      doc.accountId,
      'key.revoke',
      { target: { type: 'key', id: doc.id }, before: { status: 'active' }, after },
      (stamp) => this.store.apiKeys.revoke(doc, now, stamp),
    );
    return apiKeyView(revoked.doc);
  }
}
