// The linkedIds identification takes as evidence, and how a customer's server
// vouches for one. Keyed with the server's secret throughout: the evidence
// keys (an email would be confirmed against a plain hash by a dictionary),
// and each project's linkedId key, derived from the project and a version
// (never stored: a rotation takes the next version, a revocation none).
import { createHmac, timingSafeEqual } from 'node:crypto';
import { LINKED_ID_PROOF_MAX_DAYS } from '../../contract/linkedIds.js';
import type { ProjectDoc } from '../store/projects.js';

const KEY_PREFIX = 'lid_';
const DAY_S = 86_400;

export class LinkedIdKeys {
  private readonly evidenceKey: Buffer;
  private readonly signingRoot: Buffer;

  constructor(serverSecret: string) {
    this.evidenceKey = createHmac('sha256', serverSecret).update('deviceid linkedId evidence v1').digest();
    this.signingRoot = createHmac('sha256', serverSecret).update('deviceid linkedId signing v1').digest();
  }

  /** The key of a linkedId as identification indexes it; null while the project does not take linkedIds as evidence. */
  evidence(linkedId: string | undefined, project: Pick<ProjectDoc, 'linkedIdEvidence'> | null): string | null {
    return linkedId && project?.linkedIdEvidence !== false ? createHmac('sha256', this.evidenceKey).update(linkedId).digest('base64url') : null;
  }

  /** The project's linkedId key of a version, as shown to its owner once (`lid_…`). */
  key(projectId: string, version: number): string {
    return KEY_PREFIX + this.keyBytes(projectId, version).toString('base64url');
  }

  /**
   * Whether `proof` is the project's current key's signature of `linkedId`,
   * unexpired and expiring at most LINKED_ID_PROOF_MAX_DAYS ahead. Constant
   * time in the signature.
   */
  vouched(project: Pick<ProjectDoc, '_id' | 'linkedIdKey'> | null, linkedId: string | undefined, proof: string | undefined, nowMs: number): boolean {
    if (!project?.linkedIdKey || !linkedId || !proof) return false;
    const m = /^v1\.(\d{1,12})\.([A-Za-z0-9_-]{43})$/.exec(proof);
    if (!m) return false;
    const expiry = Number(m[1]);
    const now = Math.floor(nowMs / 1000);
    if (expiry < now || expiry > now + LINKED_ID_PROOF_MAX_DAYS * DAY_S) return false;
    const expected = createHmac('sha256', this.keyBytes(project._id, project.linkedIdKey.version)).update(`${expiry}.${linkedId}`).digest();
    const given = Buffer.from(m[2]!, 'base64url');
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  private keyBytes(projectId: string, version: number): Buffer {
    return createHmac('sha256', this.signingRoot).update(`${projectId}\0${version}`).digest();
  }
}
