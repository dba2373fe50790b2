// Vouching for the signed-in user's linkedId from your backend. A linkedId the
// page sends alone is anyone's to write, so identification takes it as
// evidence only with a proof signed with the project's linkedId key (created
// in the dashboard, `lid_…`): render the proof into the page with the user's
// id and pass both to the agent, `agent.get({ linkedId, linkedIdProof })`.
//   proof = v1.<expiry, Unix seconds>.<base64url HMAC-SHA-256(key, "<expiry>.<linkedId>")>
import { createHmac } from 'node:crypto';

/** The longest a proof may be valid ahead (the service refuses longer ones). */
export const LINKED_ID_PROOF_MAX_SECONDS = 7 * 86_400;

export interface SignLinkedIdOptions {
  /** How long the proof is valid, in seconds: 1 to 7 days' worth. Default one day. */
  ttlSeconds?: number;
  /** Now, in Unix ms (tests). Default Date.now(). */
  now?: number;
}

/** Signs `linkedId` (1–256 characters) with the project's linkedId key (`lid_…`); throws TypeError on a bad key, id or lifetime. */
export function signLinkedId(key: string, linkedId: string, options: SignLinkedIdOptions = {}): string {
  const m = /^lid_([A-Za-z0-9_-]{43})$/.exec(key);
  if (!m) throw new TypeError('signLinkedId: the key is the project’s linkedId key, lid_ and 43 base64url characters');
  if (typeof linkedId !== 'string' || linkedId.length === 0 || linkedId.length > 256) throw new TypeError('signLinkedId: linkedId must be 1 to 256 characters');
  const ttl = options.ttlSeconds ?? 86_400;
  if (!Number.isInteger(ttl) || ttl < 1 || ttl > LINKED_ID_PROOF_MAX_SECONDS)
    throw new TypeError(`signLinkedId: ttlSeconds must be a whole number from 1 to ${LINKED_ID_PROOF_MAX_SECONDS}`);
  const expiry = Math.floor((options.now ?? Date.now()) / 1000) + ttl;
  const mac = createHmac('sha256', Buffer.from(m[1]!, 'base64url')).update(`${expiry}.${linkedId}`).digest('base64url');
  return `v1.${expiry}.${mac}`;
}
