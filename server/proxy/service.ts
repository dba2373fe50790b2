// First-party proxy integration (contract/proxy.ts; docs/proxy.md). The dashboard creates, rotates and revokes a project's proxy
// secret (shown once, stored as its SHA-256) and reads whether proxied
// traffic arrives; identify's auth asks whether a request is proxied: with a
// valid secret the client address, the site's host and its scheme come from
// the proxy's headers, a wrong or revoked secret is 401, and without one those
// headers are ignored. Proxied answers set the device cookie (cookie.ts).
import type { AuditLog } from '../audit/log.js';
import { createHash, timingSafeEqual } from 'node:crypto';
import {
  DEVICE_COOKIE,
  DEVICE_COOKIE_MAX_AGE_S,
  PROXY_ERROR_CODES,
  PROXY_HEADERS,
  PROXY_ROTATION_OVERLAP_MS,
  PROXY_TRAFFIC_HOURS,
  type ProxyErrorCode,
} from '../../contract/proxy.js';
import type { Clock } from '../clock.js';
import { normalizeIp, type Ip } from '../edge/address.js';
import { LIMITS } from '../../contract/identify.js';
import { ApiError } from '../errors.js';
import { generateProxySecret, hashKey, keyHint } from '../keys/format.js';
import type { Store } from '../store/index.js';
import type { ProjectDoc, ProjectProxy, ProxySecretDoc } from '../store/projects.js';
import type { DeviceCookie, DeviceCookies } from './cookie.js';
import { hourOf, type ProxyTraffic } from './traffic.js';

/** What a request with a valid proxy secret tells about the browser behind the proxy. */
export interface ProxiedRequest {
  clientIp: Ip;
  /** The site's host (and port), lowercase. */
  host: string;
  proto: 'http' | 'https';
  /** The signed-in user's id the site's own session vouches for (deviceid-proxy-linked-id); absent when it sent none. */
  linkedId?: string;
}

const HOUR = 3_600_000;
/** Host names, IPv4 and bracketed IPv6, with an optional port. */
const HOST = /^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*|\[[0-9a-f:.]+\])(:\d{1,5})?$/;
/** Reads and compare-and-sets a rotation tries before 409: each round, one of the simultaneous rotations wins. */
const ROTATION_ATTEMPTS = 10;
/** How old a proxy's reported error may be to be recorded. */
const REPORT_MAX_AGE_MS = 7 * 24 * HOUR;

const MESSAGES: Record<ProxyErrorCode, string> = {
  invalid_secret: 'A request carried a wrong or revoked proxy secret (401): update the secret in the proxy’s configuration',
  invalid_headers: 'A proxied request lacked a usable deviceid-proxy-client-ip, -host or -proto header (400)',
  timeout: 'The proxy gave up waiting for the service',
  unreachable: 'The proxy could not connect to the service',
  service_error: 'The service, or something on the way to it, answered the proxy with a server error',
};

const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest();

function header(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const v = headers[name];
  return typeof v === 'string' ? v.trim() : undefined;
}

export class ProxyService {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly cookies: DeviceCookies,
    private readonly trafficCounter: ProxyTraffic,
    private readonly audit: AuditLog,
  ) {}

  private async project(accountId: string, projectId: string): Promise<ProjectDoc> {
    const project = await this.store.projects.ofAccount(accountId, projectId);
    if (!project) throw new ApiError('project_not_found');
    return project;
  }

  /** The previous secret while it still works. */
  private previous(proxy: ProjectProxy | null | undefined): ProjectProxy['previous'] {
    const p = proxy?.previous;
    return p && p.until.getTime() > this.clock.now() ? p : null;
  }

  private view(proxy: ProjectProxy | null | undefined) {
    const previous = this.previous(proxy);
    return {
      enabled: Boolean(proxy),
      secretHint: proxy?.current.hint ?? null,
      createdAt: proxy?.current.createdAt.toISOString() ?? null,
      previousSecretHint: previous?.hint ?? null,
      previousValidUntil: previous?.until.toISOString() ?? null,
      cookie: { name: DEVICE_COOKIE, maxAgeSeconds: DEVICE_COOKIE_MAX_AGE_S },
    } as const;
  }

  async settings(accountId: string, projectId: string) {
    return this.view((await this.project(accountId, projectId)).proxy);
  }

  /**
   * Creates the secret, or rotates it (the replaced one works for
   * PROXY_ROTATION_OVERLAP_MS more): returned only here. Written only over
   * the secret it replaces (compare-and-set), so simultaneous rotations line
   * up one after another and each answered secret is the current or the
   * previous one until a later rotation moves it out; without that, one of
   * two would replace the same secret as the other and never work.
   */
  async createSecret(accountId: string, projectId: string) {
    for (let attempt = 0; attempt < ROTATION_ATTEMPTS; attempt++) {
      const { proxy } = await this.project(accountId, projectId);
      const now = this.clock.now();
      const secret = generateProxySecret();
      const current: ProxySecretDoc = { hash: hashKey(secret), hint: keyHint(secret), createdAt: new Date(now) };
      const next: ProjectProxy = { current, previous: proxy ? { ...proxy.current, until: new Date(now + PROXY_ROTATION_OVERLAP_MS) } : null };
      const hints = (p: ProjectProxy | null | undefined) => ({ current: p?.current.hint ?? null, previous: p?.previous?.hint ?? null });
      const swapped = await this.audit.change(
        accountId,
        'proxy.secret_create',
        { target: { type: 'project', id: projectId }, before: hints(proxy), after: hints(next) },
        (stamp) => this.store.projects.swapProxy(projectId, proxy?.current.hash ?? null, next, stamp),
      );
      if (swapped) return { ...this.view(next), secret };
    }
    throw new ApiError('conflict');
  }

  /** Revokes the secret and a previous one still in its overlap. */
  async revoke(accountId: string, projectId: string) {
    const { proxy } = await this.project(accountId, projectId);
    if (!proxy) await this.store.projects.setProxy(projectId, null);
    else {
      const before = { current: proxy.current.hint, previous: proxy.previous?.hint ?? null };
      await this.audit.change(
        accountId,
        'proxy.secret_revoke',
        { target: { type: 'project', id: projectId }, before, after: { current: null, previous: null } },
        (stamp) => this.store.projects.setProxy(projectId, null, stamp),
      );
    }
    return this.view(null);
  }

  /** The share of the last PROXY_TRAFFIC_HOURS hours' identify calls that came through a proxy, and the last error a proxy met. */
  async traffic(accountId: string, projectId: string) {
    await this.project(accountId, projectId);
    await this.trafficCounter.flush();
    const from = hourOf(this.clock.now()) - (PROXY_TRAFFIC_HOURS - 1) * HOUR;
    const hours = Array.from({ length: PROXY_TRAFFIC_HOURS }, (_, i) => from + i * HOUR);
    const { counts, error } = await this.store.proxyStats.read(projectId, hours);
    return {
      from: new Date(from).toISOString(),
      identify: counts.identify,
      proxied: counts.proxied,
      share: counts.identify ? Math.min(1, counts.proxied / counts.identify) : null,
      lastError: error
        ? {
            code: (PROXY_ERROR_CODES as readonly string[]).includes(error.code) ? (error.code as ProxyErrorCode) : 'service_error',
            message: error.message,
            at: error.at.toISOString(),
            source: error.source,
          }
        : null,
    };
  }

  /**
   * Identify's question (the auth middleware asks it once the API key is
   * known): null when the request carries no proxy secret (the other
   * deviceid-proxy-* headers are then ignored); the proxied request when the
   * secret is the project's current one, or its previous one within the
   * overlap; 401 for any other secret, 400 when the proxy's headers cannot be
   * used. Costs no database read: the project comes from the cache identify
   * reads it from anyway.
   */
  async authenticate(projectId: string, headers: Record<string, string | string[] | undefined>): Promise<ProxiedRequest | null> {
    const raw = headers[PROXY_HEADERS.secret];
    if (raw === undefined) return null;
    const project = await this.store.projects.byId(projectId);
    if (typeof raw !== 'string' || !this.secretMatches(project?.proxy, raw.trim())) {
      this.failed(projectId, 'invalid_secret');
      throw new ApiError('invalid_proxy_secret');
    }
    const clientIp = normalizeIp(header(headers, PROXY_HEADERS.clientIp) ?? '');
    const host = header(headers, PROXY_HEADERS.host)?.toLowerCase() ?? '';
    const proto = header(headers, PROXY_HEADERS.proto)?.toLowerCase();
    const refuse = (message: string) => {
      this.failed(projectId, 'invalid_headers');
      return new ApiError('invalid_proxy_headers', message);
    };
    if (!clientIp) throw refuse(`${PROXY_HEADERS.clientIp}: missing or not an IP address`);
    if (host.length > 261 || !HOST.test(host)) throw refuse(`${PROXY_HEADERS.host}: missing or not a host name`);
    if (proto !== 'http' && proto !== 'https') throw refuse(`${PROXY_HEADERS.proto}: must be http or https`);
    const linkedId = header(headers, PROXY_HEADERS.linkedId);
    if (linkedId !== undefined && (linkedId.length === 0 || linkedId.length > LIMITS.linkedIdChars)) {
      throw refuse(`${PROXY_HEADERS.linkedId}: must be 1 to ${LIMITS.linkedIdChars} characters`);
    }
    this.reported(projectId, header(headers, PROXY_HEADERS.error));
    return { clientIp, host, proto, ...(linkedId !== undefined && { linkedId }) };
  }

  /** Constant time in the secret: its digest is compared with each stored digest. */
  private secretMatches(proxy: ProjectProxy | null | undefined, presented: string): boolean {
    if (!proxy || !presented) return false;
    const given = sha256(presented);
    let ok = false;
    for (const s of [proxy.current, this.previous(proxy)]) {
      if (!s) continue;
      const stored = Buffer.from(s.hash, 'hex');
      if (stored.length === given.length && timingSafeEqual(stored, given)) ok = true;
    }
    return ok;
  }

  private failed(projectId: string, code: ProxyErrorCode): void {
    this.trafficCounter.error(projectId, { code, message: MESSAGES[code], at: new Date(this.clock.now()), source: 'service' });
  }

  /** An error the proxy reports (`<code>; at=<Unix ms>`); anything malformed or out of range is ignored. */
  private reported(projectId: string, value: string | undefined): void {
    const m = value ? /^(timeout|unreachable|service_error)\s*;\s*at=(\d{1,15})$/.exec(value) : null;
    if (!m) return;
    const at = Number(m[2]);
    const now = this.clock.now();
    if (at < now - REPORT_MAX_AGE_MS || at > now + 60_000) return;
    const code = m[1] as ProxyErrorCode;
    this.trafficCounter.error(projectId, { code, message: MESSAGES[code], at: new Date(Math.min(at, now)), source: 'proxy' });
  }

  /** The device cookie of a proxied identify: the one the browser presented when valid for the project, else a new one. */
  deviceCookie(projectId: string, presented: unknown): DeviceCookie {
    return this.cookies.forRequest(projectId, presented);
  }

  /** The Set-Cookie header of the answer (Secure when the site is https). */
  setCookie(cookie: DeviceCookie, proxied: ProxiedRequest): string {
    return this.cookies.header(cookie, proxied.proto === 'https');
  }

  /** Counts a successful identify call of the project for the traffic figures. */
  counted(projectId: string, proxied: boolean): void {
    this.trafficCounter.count(projectId, proxied);
  }

  /** Writes what is counted (on shutdown). */
  close(): Promise<void> {
    return this.trafficCounter.flush();
  }
}
