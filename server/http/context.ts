// What authentication attaches to a request.
import type { ApiKeyDoc } from '../store/apiKeys.js';

export interface AuthContext {
  apiKey?: ApiKeyDoc;
}

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      auth?: AuthContext;
    }
  }
}
