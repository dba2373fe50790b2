// Store documents → the shapes the contract returns.
import type { PlanTable } from '../config.js';
import type { AccountDoc, UserDoc } from '../store/accounts.js';
import type { ApiKeyDoc } from '../store/apiKeys.js';
import type { ProjectDoc } from '../store/projects.js';

export const userView = (u: UserDoc) => ({ id: u._id, email: u.email, name: u.name, createdAt: u.createdAt.toISOString() });

export const accountView = (a: AccountDoc, plans: PlanTable, usage: { period: string; count: number }, rights: { admin: boolean; canChangePlan: boolean }) => ({
  id: a._id,
  plan: a.plan,
  limits: { ...plans[a.plan] },
  usage,
  ...rights,
});

export const projectView = (p: ProjectDoc) => ({
  id: p._id,
  name: p.name,
  allowedDomains: p.allowedDomains,
  linkedIdEvidence: p.linkedIdEvidence ?? true,
  createdAt: p.createdAt.toISOString(),
});

export const apiKeyView = (k: ApiKeyDoc) => ({
  id: k.id,
  name: k.name,
  type: k.type,
  status: k.status,
  projectId: k.projectId,
  hint: k.hint,
  createdAt: k.createdAt.toISOString(),
  lastUsedAt: k.lastUsedAt?.toISOString() ?? null,
  revokedAt: k.revokedAt?.toISOString() ?? null,
  source: k.source,
});
