// The device cookie a proxied identify sets on the customer's site
// (contract/proxy.ts DEVICE_COOKIE): a random device token, signed by the
// service for one project. Value: `1.<token>.<mac>`, where token is 16
// random bytes and mac the first 16 bytes of HMAC-SHA256("1.<projectId>.<token>")
// under a key derived from SERVER_SECRET (HKDF-SHA256), both base64url. The
// project is bound by the MAC, not written in the value: a forged or altered
// cookie, or another project's, fails verification and is ignored (the
// answer then sets a new one).
import { createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import { DEVICE_COOKIE, DEVICE_COOKIE_MAX_AGE_S } from '../../contract/proxy.js';

const VALUE = /^1\.([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{22})$/;

/** A device cookie of the request: its token, and whether the browser presented it (false: issued now). */
export interface DeviceCookie {
  token: string;
  value: string;
  presented: boolean;
}

export class DeviceCookies {
  private readonly key: Buffer;

  constructor(serverSecret: string) {
    this.key = Buffer.from(hkdfSync('sha256', serverSecret, 'deviceid', 'device cookie v1', 32));
  }

  private mac(projectId: string, token: string): Buffer {
    return createHmac('sha256', this.key).update(`1.${projectId}.${token}`).digest().subarray(0, 16);
  }

  /** A new device token for the project, and its cookie value. */
  issue(projectId: string): DeviceCookie {
    const token = randomBytes(16).toString('base64url');
    return { token, value: `1.${token}.${this.mac(projectId, token).toString('base64url')}`, presented: false };
  }

  /** The token of a cookie this service signed for this project; null for anything else. */
  verify(projectId: string, value: unknown): string | null {
    const m = typeof value === 'string' ? VALUE.exec(value) : null;
    if (!m) return null;
    // Compared as text: base64url's last character has spare bits, so several texts decode to the
    // same MAC; only the exact value this service issued is accepted (no cookie is malleable).
    const given = Buffer.from(m[2]!);
    const expected = Buffer.from(this.mac(projectId, m[1]!).toString('base64url'));
    return given.length === expected.length && timingSafeEqual(given, expected) ? m[1]! : null;
  }

  /** The presented cookie when it is valid for the project, else a new one. */
  forRequest(projectId: string, presented: unknown): DeviceCookie {
    const token = this.verify(projectId, presented);
    return token ? { token, value: presented as string, presented: true } : this.issue(projectId);
  }

  /**
   * The Set-Cookie header: host-only (no Domain: the proxy adds one when told
   * the site's domain), the whole site, HttpOnly (no script reads or writes
   * it), SameSite=Lax, Secure on an https site, and 400 days, renewed by every
   * proxied identify.
   */
  header(cookie: DeviceCookie, secure: boolean): string {
    return `${DEVICE_COOKIE}=${cookie.value}; Max-Age=${DEVICE_COOKIE_MAX_AGE_S}; Path=/; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`;
  }
}
