// Who makes the request being served, for the audit log: the auth middleware
// names the actor (the signed-in user or the API key) with the client's
// address and user agent, and every change recorded while serving the
// request carries them. Async context, so that services record changes
// without every signature carrying the request.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { AuditActor } from '../store/audit.js';

export interface RequestActor {
  actor: AuditActor;
  ip: string;
  userAgent: string | null;
}

const storage = new AsyncLocalStorage<RequestActor>();

export const ANONYMOUS: AuditActor = { type: 'anonymous', id: null, label: null };

/** Runs `fn` (the rest of the request) with `who` as its actor. */
export function withActor<T>(who: RequestActor, fn: () => T): T {
  return storage.run(who, fn);
}

/** The actor of the request being served (anonymous outside any request). */
export function currentActor(): RequestActor {
  return storage.getStore() ?? { actor: ANONYMOUS, ip: '', userAgent: null };
}
