// Test helper: put an API key straight into the store (the dashboard API that
// normally creates keys has its own tests).
import { ulid } from 'ulid';
import { generateKey, hashKey, keyHint } from '../../server/keys/format.js';
import type { ApiKeyType } from '../../server/store/apiKeys.js';
import type { Store } from '../../server/store/index.js';

export async function seedKey(store: Store, type: ApiKeyType, accountId = 'acc_test', projectId = 'prj_test'): Promise<string> {
  const key = generateKey(type);
  await store.apiKeys.insert({
    _id: hashKey(key),
    id: `key_${ulid()}`,
    accountId,
    projectId,
    name: `${type} key`,
    type,
    status: 'active',
    hint: keyHint(key),
    source: 'dashboard',
    createdAt: new Date(),
    lastUsedAt: null,
    revokedAt: null,
  });
  return key;
}
