// Web Bot Auth: HTTP Message Signatures (RFC 9421) that bots and AI agents
// put on their requests, verified against the key directory their
// Signature-Agent names (draft-meunier-webbotauth-httpsig-protocol, the
// successor of draft-meunier-web-bot-auth-architecture).
//
// A signed request carries Signature-Input, Signature and Signature-Agent.
// Signature-Agent is a Dictionary keyed by the signature's label whose member
// is the agent's https origin (`sig1="https://chatgpt.com"`); the legacy bare
// String form (`"https://chatgpt.com"`) is accepted too, as the draft allows.
// The origin's /.well-known/http-message-signatures-directory is a JWKS; the
// signature's keyid is the RFC 7638 thumbprint of one of its Ed25519 keys.
//
// RFC 9421 parsing and the signature base come from http-message-sig (the
// Cloudflare web-bot-auth repository's RFC 9421 package); what the Web Bot Auth
// profile adds is here: which signature to take (tag="web-bot-auth"), what it
// must cover, its time window, replay, and the directory fetch.
//
// The directory URL comes from the request, so the fetch is an SSRF surface:
// - the agent must be the ASCII serialization of an https origin (no userinfo,
//   path other than "/", query or fragment), not an IP literal, not localhost;
// - every address its name resolves to must be public unicast (ipaddr.js
//   range "unicast": no private, loopback, link-local, CGNAT, ULA, multicast,
//   NAT64/6to4/Teredo, documentation or reserved ranges), checked before the
//   fetch. Known gap: the check and the fetch resolve separately, so a DNS
//   answer that changes between the two (rebinding with a TTL of 0) can still
//   reach an internal address; an egress proxy or firewall closes that.
// - no redirects, 200 only, a time limit, a 64 KB body cap, at most 64 keys;
// - one in-flight fetch per origin, answers cached (failures for 30 s), and a
//   bounded number of origins remembered.
// `allowHttp` (tests only) lifts the https, IP-literal, localhost and address
// checks so a directory can be served from 127.0.0.1.
import { createHash, createPublicKey, verify as verifyEd25519, type KeyObject } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import { isSignatureError, SignatureErrorCode, verifySignature, type FieldOccurrence, type Verifier } from 'http-message-sig';
import ipaddr from 'ipaddr.js';
import { LRUCache } from 'lru-cache';
import { isInnerList, parseDictionary, parseItem, Token, type InnerList, type Parameters } from 'structured-headers';

export interface SignedRequest {
  method: string;
  /** host[:port] the request was addressed to (lowercase). */
  authority: string;
  /** path + query as requested. */
  path: string;
  /** lowercase names, node-style. */
  headers: Record<string, string | string[] | undefined>;
}

export type WebBotAuthResult = { result: 'signed'; agent: string; keyId: string } | { result: 'invalid'; agent: string | null; reason: string } | null;

export interface WebBotAuthOptions {
  /** Injected clock (ms). */
  now: () => number;
  /** Fetches key directories (default: the global fetch). */
  fetch?: typeof fetch;
  /** Directory fetch time limit, name resolution included (default 300 ms). */
  timeoutMs?: number;
  /** Directory cache lifetime when the response has no Cache-Control max-age (default 1 h). */
  cacheTtlMs?: number;
  /** Tolerance on `created` in the future (default 60 s). */
  maxSkewMs?: number;
  /** Longest `expires - created` accepted (default 24 h, the drafts' recommended ceiling). */
  maxValidityMs?: number;
  /** Tests only: allow http:// directories, IP literals, localhost and private addresses. */
  allowHttp?: boolean;
}

/**
 * Reasons an `invalid` result carries (stable strings, for logs and metrics).
 * Directory failures (`directory-*`, `forbidden-signature-agent`) say nothing
 * about the signer, only that the request could not be attributed.
 */
export const WEB_BOT_AUTH_REASONS = [
  'malformed', // Signature / Signature-Input missing its pair or not parseable
  'not-web-bot-auth', // no signature with tag="web-bot-auth"
  'missing-signature-agent', // no Signature-Agent, or no member for the label
  'bad-signature-agent', // not the serialization of an https origin, or an unsupported type
  'forbidden-signature-agent', // IP literal, localhost, or resolves to a non-public address
  'authority-not-covered', // neither @authority nor @target-uri is covered
  'signature-agent-not-covered',
  'missing-params', // created, expires or keyid absent
  'unsupported-algorithm', // alg other than ed25519
  'created-in-future',
  'expired',
  'validity-too-long',
  'directory-unreachable', // network error, non-200, redirect, name that does not resolve
  'directory-timeout',
  'directory-too-large',
  'directory-invalid', // not JSON, not a JWKS, wrong media type, too many keys
  'unknown-key', // the directory has no usable Ed25519 key with that keyid
  'bad-signature',
  'replayed',
  'internal',
] as const;
export type WebBotAuthReason = (typeof WEB_BOT_AUTH_REASONS)[number];

const WEB_BOT_AUTH_TAG = 'web-bot-auth';
export const DIRECTORY_PATH = '/.well-known/http-message-signatures-directory';
export const DIRECTORY_MEDIA_TYPE = 'application/http-message-signatures-directory+json';

const MAX_DIRECTORY_BYTES = 64 * 1024;
const MAX_KEYS = 64;
/** A failed or slow directory is not asked again for this long (the drafts: at most 5 minutes). */
const NEGATIVE_TTL_MS = 30_000;
/** max-age is honoured between these bounds; no-store / no-cache / max-age=0 count as the floor. */
const MIN_TTL_MS = 60_000;
const MAX_TTL_MS = 24 * 3600_000;
/** A good directory keeps verifying this long past its freshness while refreshes fail (an outage does not revoke keys). */
const MAX_STALE_MS = 24 * 3600_000;
const MAX_ORIGINS = 1_000;
const MAX_REPLAY_ENTRIES = 100_000;

class Reject extends Error {
  constructor(readonly reason: WebBotAuthReason) {
    super(reason);
  }
}

interface DirectoryKey {
  key: KeyObject;
  nbf?: number;
  exp?: number;
}
type Keys = Map<string, DirectoryKey>;

interface OriginState {
  keys?: Keys;
  freshUntil: number;
  staleUntil: number;
  retryAt: number;
  failure?: WebBotAuthReason;
  inflight?: Promise<void>;
}

export class WebBotAuth {
  private readonly now: () => number;
  private readonly fetchFn: typeof fetch;
  private readonly timeoutMs: number;
  private readonly cacheTtlMs: number;
  private readonly maxSkewMs: number;
  private readonly maxValidityMs: number;
  private readonly allowHttp: boolean;
  private readonly origins = new LRUCache<string, OriginState>({ max: MAX_ORIGINS });
  /** (agent, keyid, signature) and (agent, keyid, nonce) → until when (ms) a second sighting is a replay. */
  private readonly seen = new LRUCache<string, number>({ max: MAX_REPLAY_ENTRIES });

  constructor(opts: WebBotAuthOptions) {
    this.now = opts.now;
    this.fetchFn = opts.fetch ?? ((input, init) => fetch(input, init));
    this.timeoutMs = opts.timeoutMs ?? 300;
    this.cacheTtlMs = opts.cacheTtlMs ?? 3600_000;
    this.maxSkewMs = opts.maxSkewMs ?? 60_000;
    this.maxValidityMs = opts.maxValidityMs ?? 24 * 3600_000;
    this.allowHttp = opts.allowHttp ?? false;
  }

  /** Never throws: null when the request carries no signature, else signed or invalid with a reason. */
  async verify(req: SignedRequest): Promise<WebBotAuthResult> {
    const context: { agent: string | null } = { agent: null };
    try {
      return await this.check(req, context);
    } catch (e) {
      return { result: 'invalid', agent: context.agent, reason: e instanceof Reject ? e.reason : 'internal' };
    }
  }

  private async check(req: SignedRequest, context: { agent: string | null }): Promise<WebBotAuthResult> {
    const signature = header(req.headers, 'signature');
    const signatureInput = header(req.headers, 'signature-input');
    if (signature === undefined && signatureInput === undefined) return null;
    if (signature === undefined || signatureInput === undefined) throw new Reject('malformed');

    const chosen = webBotAuthSignature(signatureInput);
    const { label, member } = chosen;
    const covered = member[0];
    const params = member[1];

    const agentHeader = header(req.headers, 'signature-agent');
    if (agentHeader === undefined) throw new Reject('missing-signature-agent');
    const agent = signatureAgentFor(agentHeader, label);
    const origin = this.agentOrigin(agent.url);
    context.agent = origin.host;

    if (!covers(covered, '@authority') && !covers(covered, '@target-uri')) throw new Reject('authority-not-covered');
    if (!covers(covered, 'signature-agent') && !(agent.dictionary && covers(covered, 'signature-agent', label))) {
      throw new Reject('signature-agent-not-covered');
    }

    const created = params.get('created');
    const expires = params.get('expires');
    const keyId = params.get('keyid');
    const nonce = params.get('nonce');
    const alg = params.get('alg');
    if (!Number.isInteger(created) || !Number.isInteger(expires) || typeof keyId !== 'string' || typeof created !== 'number' || typeof expires !== 'number') {
      throw new Reject('missing-params');
    }
    if (alg !== undefined && alg !== 'ed25519') throw new Reject('unsupported-algorithm');
    if (nonce !== undefined && typeof nonce !== 'string') throw new Reject('malformed');
    const now = this.now();
    if (created * 1000 > now + this.maxSkewMs) throw new Reject('created-in-future');
    if (expires * 1000 < now) throw new Reject('expired');
    if (expires <= created) throw new Reject('malformed');
    if ((expires - created) * 1000 > this.maxValidityMs) throw new Reject('validity-too-long');

    const keys = await this.keysFor(origin);
    const entry = keys.get(keyId);
    const nowSec = Math.floor(this.now() / 1000);
    if (entry === undefined || (entry.nbf !== undefined && nowSec < entry.nbf) || (entry.exp !== undefined && nowSec >= entry.exp)) {
      throw new Reject('unknown-key');
    }

    const verifier: Verifier = {
      algorithm: 'ed25519',
      verify: (data, sig) => verifyEd25519(null, data, entry.key, sig),
    };
    let verifiedSignature: Uint8Array;
    try {
      const verified = await verifySignature(
        {
          kind: 'request',
          method: req.method,
          targetUri: `https://${req.authority}${req.path.startsWith('/') ? req.path : `/${req.path}`}`,
          fields: coveredFields(req.headers, covered),
        },
        {
          label,
          policy: {
            algorithms: ['ed25519'],
            requiredComponents: [],
            requiredParameters: ['created', 'expires', 'keyid'],
            clockSkew: Math.ceil(this.maxSkewMs / 1000),
            now: nowSec,
          },
          resolveVerifier: (candidate) => {
            if (candidate.parameters.keyid !== keyId) throw new Reject('malformed');
            return verifier;
          },
        },
      );
      verifiedSignature = verified.signature;
    } catch (e) {
      throw new Reject(libraryReason(e));
    }

    // Recorded only once verified, so a tampered copy sent first cannot burn the genuine one.
    const at = this.now();
    const until = expires * 1000;
    const seenKeys = [`${origin.host}\n${keyId}\ns\n${Buffer.from(verifiedSignature).toString('base64')}`];
    if (nonce !== undefined) seenKeys.push(`${origin.host}\n${keyId}\nn\n${nonce}`);
    if (seenKeys.some((k) => (this.seen.get(k) ?? -Infinity) >= at)) throw new Reject('replayed');
    for (const k of seenKeys) this.seen.set(k, until);

    return { result: 'signed', agent: origin.host, keyId };
  }

  /** The agent's origin, or a rejection: https only, nothing but an origin, no IP literal or localhost (unless allowHttp). */
  private agentOrigin(raw: string): URL {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new Reject('bad-signature-agent');
    }
    if (url.protocol !== 'https:' && !(this.allowHttp && url.protocol === 'http:')) throw new Reject('bad-signature-agent');
    const lowered = raw.toLowerCase();
    if (lowered !== url.origin && lowered !== `${url.origin}/`) throw new Reject('bad-signature-agent');
    if (!this.allowHttp) {
      const host = url.hostname.replace(/\.$/, '');
      if (host.startsWith('[') || ipaddr.isValid(host) || /^[\d.]+$/.test(host)) throw new Reject('forbidden-signature-agent');
      if (host === 'localhost' || host.endsWith('.localhost')) throw new Reject('forbidden-signature-agent');
    }
    return url;
  }

  /** The directory's keys, from cache, a shared in-flight fetch, or a new one. */
  private async keysFor(origin: URL): Promise<Keys> {
    let state = this.origins.get(origin.origin);
    if (state === undefined) {
      state = { freshUntil: 0, staleUntil: 0, retryAt: 0 };
      this.origins.set(origin.origin, state);
    }
    const s = state;
    if (s.keys !== undefined && this.now() < s.freshUntil) return s.keys;
    if (s.inflight === undefined && this.now() >= s.retryAt) {
      s.inflight = this.refresh(origin, s).finally(() => {
        s.inflight = undefined;
      });
    }
    if (s.inflight !== undefined) await s.inflight;
    // A failed refresh does not evict a directory that was good (an outage must not revoke keys).
    if (s.keys !== undefined && this.now() < s.staleUntil) return s.keys;
    throw new Reject(s.failure ?? 'directory-unreachable');
  }

  private async refresh(origin: URL, s: OriginState): Promise<void> {
    try {
      const { keys, ttlMs } = await this.fetchDirectory(origin);
      const at = this.now();
      s.keys = keys;
      s.freshUntil = at + ttlMs;
      s.staleUntil = at + ttlMs + MAX_STALE_MS;
      s.retryAt = 0;
      s.failure = undefined;
    } catch (e) {
      s.failure = e instanceof Reject ? e.reason : 'directory-unreachable';
      s.retryAt = this.now() + NEGATIVE_TTL_MS;
    }
  }

  /** One fetch, bounded in time (resolution included) whatever the fetch implementation does with the signal. */
  private async fetchDirectory(origin: URL): Promise<{ keys: Keys; ttlMs: number }> {
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        controller.abort();
        reject(new Reject('directory-timeout'));
      }, this.timeoutMs);
    });
    try {
      return await Promise.race([this.fetchBounded(origin, controller.signal), deadline]);
    } finally {
      clearTimeout(timer);
    }
  }

  private async fetchBounded(origin: URL, signal: AbortSignal): Promise<{ keys: Keys; ttlMs: number }> {
    if (!this.allowHttp) await assertPublic(origin.hostname);
    let response: Response;
    try {
      response = await this.fetchFn(new URL(DIRECTORY_PATH, origin), {
        method: 'GET',
        redirect: 'manual',
        signal,
        headers: { accept: `${DIRECTORY_MEDIA_TYPE}, application/json;q=0.5` },
      });
    } catch (e) {
      throw e instanceof Reject ? e : new Reject('directory-unreachable');
    }
    if (response.status !== 200) {
      await response.body?.cancel().catch(() => undefined);
      throw new Reject('directory-unreachable');
    }
    const mediaType = (response.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    if (mediaType !== DIRECTORY_MEDIA_TYPE && mediaType !== 'application/json') {
      await response.body?.cancel().catch(() => undefined);
      throw new Reject('directory-invalid');
    }
    const text = await readCapped(response, MAX_DIRECTORY_BYTES);
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new Reject('directory-invalid');
    }
    return { keys: parseJwks(json), ttlMs: this.ttlFrom(response.headers.get('cache-control')) };
  }

  private ttlFrom(cacheControl: string | null): number {
    if (cacheControl === null) return this.cacheTtlMs;
    const floor = Math.min(MIN_TTL_MS, this.cacheTtlMs);
    if (/(^|,)\s*no-(store|cache)\b/i.test(cacheControl)) return floor;
    const maxAge = /(?:^|,)\s*max-age\s*=\s*"?(\d{1,10})"?\s*(?:,|$)/i.exec(cacheControl);
    if (maxAge === null) return this.cacheTtlMs;
    return Math.min(MAX_TTL_MS, Math.max(floor, Number(maxAge[1]) * 1000));
  }
}

/** One header's value: repeated fields joined as HTTP combines them. */
function header(headers: SignedRequest['headers'], name: string): string | undefined {
  const v = headers[name];
  if (v === undefined) return undefined;
  return Array.isArray(v) ? (v.length === 0 ? undefined : v.join(', ')) : v;
}

/** The first Signature-Input member tagged web-bot-auth. */
function webBotAuthSignature(signatureInput: string): { label: string; member: InnerList } {
  let inputs: ReturnType<typeof parseDictionary>;
  try {
    inputs = parseDictionary(signatureInput);
  } catch {
    throw new Reject('malformed');
  }
  for (const [label, member] of inputs) {
    if (isInnerList(member) && member[1].get('tag') === WEB_BOT_AUTH_TAG) return { label, member };
  }
  throw new Reject('not-web-bot-auth');
}

/** The Signature-Agent URL for a label: the Dictionary member keyed by it, or the legacy bare String. */
function signatureAgentFor(raw: string, label: string): { url: string; dictionary: boolean } {
  const value = raw.trim();
  try {
    if (value.startsWith('"')) {
      const [url] = parseItem(value);
      if (typeof url !== 'string') throw new Reject('bad-signature-agent');
      return { url, dictionary: false };
    }
    const member = parseDictionary(value).get(label);
    if (member === undefined) throw new Reject('missing-signature-agent');
    if (isInnerList(member) || typeof member[0] !== 'string') throw new Reject('bad-signature-agent');
    const type = member[1].get('type');
    if (type !== undefined && !(type instanceof Token && type.toString() === 'directory')) throw new Reject('bad-signature-agent');
    return { url: member[0], dictionary: true };
  } catch (e) {
    throw e instanceof Reject ? e : new Reject('bad-signature-agent');
  }
}

/** Whether the signature covers a component: bare, or (with `key`) exactly `name;key="…"`. */
function covers(components: InnerList[0], name: string, key?: string): boolean {
  return components.some(([n, p]: [unknown, Parameters]) => n === name && (key === undefined ? p.size === 0 : p.size === 1 && p.get('key') === key));
}

/** Only the fields the signature needs reach the RFC 9421 code (an unrelated non-ASCII header must not spoil it). */
function coveredFields(headers: SignedRequest['headers'], components: InnerList[0]): FieldOccurrence[] {
  const names = new Set(['signature', 'signature-input']);
  for (const [n] of components) if (typeof n === 'string' && !n.startsWith('@')) names.add(n);
  const fields: FieldOccurrence[] = [];
  for (const name of names) {
    const v = headers[name];
    if (v === undefined) continue;
    for (const value of Array.isArray(v) ? v : [v]) fields.push({ name, value });
  }
  return fields;
}

function libraryReason(e: unknown): WebBotAuthReason {
  if (e instanceof Reject) return e.reason;
  if (!isSignatureError(e)) return 'internal';
  if (e.code === SignatureErrorCode.ResolverFailed) return e.cause instanceof Reject ? e.cause.reason : 'internal';
  if (e.code === SignatureErrorCode.VerificationFailed) return 'bad-signature';
  if (e.code === SignatureErrorCode.AlgorithmMismatch) return 'unsupported-algorithm';
  if (e.code === SignatureErrorCode.PolicyViolation) {
    if (/future/i.test(e.message)) return 'created-in-future';
    if (/expired/i.test(e.message)) return 'expired';
    if (/Algorithm/.test(e.message)) return 'unsupported-algorithm';
  }
  return 'malformed';
}

/** Every address the name resolves to must be public unicast. */
async function assertPublic(hostname: string): Promise<void> {
  let addresses: { address: string }[];
  try {
    addresses = await lookup(hostname.replace(/^\[|\]$/g, ''), { all: true, verbatim: true });
  } catch {
    throw new Reject('directory-unreachable');
  }
  if (addresses.length === 0) throw new Reject('directory-unreachable');
  for (const { address } of addresses) {
    if (!ipaddr.isValid(address) || ipaddr.process(address).range() !== 'unicast') throw new Reject('forbidden-signature-agent');
  }
}

async function readCapped(response: Response, max: number): Promise<string> {
  const declared = Number(response.headers.get('content-length') ?? '0');
  if (declared > max) {
    await response.body?.cancel().catch(() => undefined);
    throw new Reject('directory-too-large');
  }
  if (response.body === null) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    let chunk: ReadableStreamReadResult<Uint8Array>;
    try {
      chunk = await reader.read();
    } catch {
      throw new Reject('directory-unreachable');
    }
    if (chunk.done) break;
    total += chunk.value.byteLength;
    if (total > max) {
      await reader.cancel().catch(() => undefined);
      throw new Reject('directory-too-large');
    }
    chunks.push(chunk.value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The directory's usable Ed25519 keys by RFC 7638 thumbprint; a kid that is not the thumbprint disqualifies its key. */
function parseJwks(json: unknown): Keys {
  if (typeof json !== 'object' || json === null || !Array.isArray((json as { keys?: unknown }).keys)) throw new Reject('directory-invalid');
  const list = (json as { keys: unknown[] }).keys;
  if (list.length > MAX_KEYS) throw new Reject('directory-invalid');
  const keys: Keys = new Map();
  for (const jwk of list) {
    if (typeof jwk !== 'object' || jwk === null) continue;
    const { kty, crv, x, kid, nbf, exp } = jwk as Record<string, unknown>;
    if (kty !== 'OKP' || crv !== 'Ed25519' || typeof x !== 'string' || !/^[A-Za-z0-9_-]{43}$/.test(x)) continue;
    const thumbprint = jwkThumbprint(x);
    if (kid !== undefined && kid !== thumbprint) continue;
    let key: KeyObject;
    try {
      key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x }, format: 'jwk' });
    } catch {
      continue;
    }
    keys.set(thumbprint, { key, nbf: typeof nbf === 'number' ? nbf : undefined, exp: typeof exp === 'number' ? exp : undefined });
  }
  return keys;
}

/** RFC 7638 thumbprint of an Ed25519 JWK (RFC 8037 A.3: members crv, kty, x in that order). */
function jwkThumbprint(x: string): string {
  return createHash('sha256').update(`{"crv":"Ed25519","kty":"OKP","x":"${x}"}`).digest('base64url');
}
