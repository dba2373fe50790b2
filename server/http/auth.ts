// One middleware enforces the `auth` declared in each route's metadata. It runs
// before ts-rest validates the request, so a bad key is 401 even when the body
// is also invalid.
import type { NextFunction, Request, Response } from 'express';
import type { RouteMeta } from '../../contract/common.js';
import { ApiError } from '../errors.js';
import { authenticateKey } from '../keys/authenticate.js';
import type { Store } from '../store/index.js';
import './context.js';

type TsRestRequest = Request & { tsRestRoute?: { metadata?: unknown } };

const INVALID_KEY = 'Invalid or missing API key';
const INVALID_SECRET = 'Invalid or missing secret key';

function bearer(req: Request): string | undefined {
  const h = req.headers.authorization;
  if (!h) return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(h);
  return m?.[1];
}

function header(req: Request, name: string): string | undefined {
  const v = req.headers[name];
  return typeof v === 'string' ? v.trim() : undefined;
}

export function authMiddleware(store: Store) {
  return async (req: Request, _res: Response, next: NextFunction): Promise<void> => {
    try {
      const meta = (req as TsRestRequest).tsRestRoute?.metadata as RouteMeta | undefined;
      const kind = meta?.auth ?? 'public';
      req.auth = {};
      switch (kind) {
        case 'public':
          break;
        case 'browserKey': {
          const key = await authenticateKey(store, header(req, 'x-api-key'), ['live', 'test']);
          if (!key) throw new ApiError(401, INVALID_KEY);
          req.auth.apiKey = key;
          break;
        }
        case 'secretKey': {
          const key = await authenticateKey(store, header(req, 'x-api-key'), ['secret']);
          if (!key) throw new ApiError(401, INVALID_SECRET);
          req.auth.apiKey = key;
          break;
        }
        case 'secretBearer': {
          const key = await authenticateKey(store, bearer(req), ['secret']);
          if (!key) throw new ApiError(401, INVALID_SECRET);
          req.auth.apiKey = key;
          break;
        }
        case 'session':
          throw new ApiError(401, 'Not signed in');
      }
      next();
    } catch (err) {
      // Express 4 does not catch rejected promises of middleware.
      next(err);
    }
  };
}
