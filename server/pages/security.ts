// Security headers for every HTML page and page asset (helmet). The CSP
// allows only our own scripts, styles and fetches; pages cannot be framed
// (clickjacking a consent page would be an approval by proxy).
import helmet from 'helmet';
import type { RequestHandler } from 'express';

type Directives = Record<string, string[]>;

/** `csp` replaces directives of the pages' policy for one page (the API reference's). */
export function pageSecurity(baseUrl: string, csp: Directives = {}): RequestHandler {
  const https = baseUrl.startsWith('https://');
  return helmet({
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'none'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'"],
        imgSrc: ["'self'", 'data:'],
        connectSrc: ["'self'"],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
        baseUri: ["'none'"],
        objectSrc: ["'none'"],
        ...csp,
        ...(https ? { upgradeInsecureRequests: [] } : {}),
      },
    },
    frameguard: { action: 'deny' },
    // Not helmet's default `no-referrer`: with it, browsers send `Origin: null`
    // on same-origin POSTs, which the CSRF check (Origin must be ours) rejects.
    referrerPolicy: { policy: 'same-origin' },
    strictTransportSecurity: https ? { maxAge: 15552000, includeSubDomains: false } : false,
  });
}
