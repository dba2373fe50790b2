import { initServer } from '@ts-rest/express';
import { contract } from '../../contract/index.js';
import { DEVICE_COOKIE } from '../../contract/proxy.js';
import { apiKeyOf } from '../http/context.js';
import { admission } from '../metering/meter.js';
import type { RouteDeps } from '../services.js';
import { readCookie } from '../http/cookies.js';
import { markIdentify } from '../metrics/http.js';

const s = initServer();

export const identifyRoutes = ({ services }: RouteDeps) =>
  s.router(contract.identify, {
    identify: async ({ req, res, body }) => {
      const key = apiKeyOf(req);
      const origin = typeof req.headers.origin === 'string' ? req.headers.origin : undefined;
      // Through a first-party proxy (the auth middleware checked its secret): the browser behind it, and its device cookie.
      const proxied = req.auth?.proxy ?? null;
      const cookie = proxied ? services.proxy.deviceCookie(key.projectId, readCookie(req, DEVICE_COOKIE)) : null;
      const edge = await services.edge(req, proxied);
      // Metering leaves the X-RateLimit-* headers of the admitted call in the slot.
      const slot: { headers?: Record<string, string> } = {};
      const result = await admission.run(slot, () =>
        services.identification.identify(key, body, edge, {
          origin,
          ...(proxied &&
            cookie && {
              proxy: { host: proxied.host, deviceToken: cookie.token, presented: cookie.presented, linkedId: proxied.linkedId },
            }),
        }),
      );
      if (slot.headers) res.set(slot.headers);
      markIdentify(res, 'sealedResult' in result ? 'sealed' : result.visitCount === 1 ? 'first_visit' : 'returning');
      services.proxy.counted(key.projectId, proxied !== null);
      if (proxied && cookie) res.setHeader('Set-Cookie', services.proxy.setCookie(cookie, proxied));
      // `kind` tells the two answers apart (the OpenAPI discriminator).
      return { status: 200, body: 'sealedResult' in result ? { kind: 'sealed' as const, ...result } : { kind: 'result' as const, ...result } };
    },
  });
