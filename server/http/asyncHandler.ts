// Express 4 does not await handlers: an async one's rejection would go
// unhandled instead of reaching the error middleware.
import type { Request, RequestHandler, Response } from 'express';

export function asyncHandler(handle: (req: Request, res: Response) => Promise<void>): RequestHandler {
  return (req, res, next) => {
    handle(req, res).catch(next);
  };
}
