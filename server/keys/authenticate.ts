// Resolves a presented API key to its active record, or null.
import { timingSafeEqual } from 'node:crypto';
import type { ApiKeyDoc, ApiKeyType } from '../store/apiKeys.js';
import type { Store } from '../store/index.js';
import { hashKey, parseKey } from './format.js';

export async function authenticateKey(store: Store, presented: string | undefined, allowed: readonly ApiKeyType[]): Promise<ApiKeyDoc | null> {
  if (!presented) return null;
  const type = parseKey(presented);
  // Malformed keys and keys of the wrong type never reach the database.
  if (!type || !allowed.includes(type)) return null;
  const hash = hashKey(presented);
  const doc = await store.apiKeys.findByHash(hash);
  if (!doc || !timingSafeEqual(Buffer.from(doc._id), Buffer.from(hash))) return null;
  if (doc.status !== 'active' || doc.type !== type) return null;
  return doc;
}
