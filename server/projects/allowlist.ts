// The domain allowlist of a project (spec 5.4): when non-empty, identify must
// come from an allowed page (`url` host) and, if the browser sent one, an
// allowed Origin; through a first-party proxy, the site's host the proxy
// names must be allowed too. Test keys may also be used from localhost.
import { ApiError } from '../errors.js';
import type { ApiKeyType } from '../store/apiKeys.js';

const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

export function hostMatches(host: string, pattern: string): boolean {
  if (pattern.startsWith('*.')) {
    const base = pattern.slice(2);
    return host.endsWith('.' + base) && host.length > base.length + 1;
  }
  return host === pattern;
}

function hostOf(url: string | undefined): string | null {
  if (!url) return null;
  try {
    const u = new URL(url);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.hostname.toLowerCase() : null;
  } catch {
    return null;
  }
}

function allowed(host: string | null, domains: string[], keyType: ApiKeyType): boolean {
  if (host === null) return false;
  if (keyType === 'test' && LOCAL_HOSTS.has(host)) return true;
  return domains.some((d) => hostMatches(host, d));
}

export function checkAllowlist(
  domains: string[],
  keyType: ApiKeyType,
  pageUrl: string | undefined,
  origin: string | undefined,
  /** The site's host (and port) a first-party proxy forwarded for. */
  proxyHost?: string,
): void {
  if (domains.length === 0) return;
  const pageOk = allowed(hostOf(pageUrl), domains, keyType);
  const originOk = origin === undefined || allowed(hostOf(origin), domains, keyType);
  const hostOk = proxyHost === undefined || allowed(hostOf(`http://${proxyHost}`), domains, keyType);
  if (!pageOk || !originOk || !hostOk) throw new ApiError('domain_not_allowed');
}
