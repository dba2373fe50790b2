// cookie-parser types every cookie as `any`: read one as the string it is.
import type { Request } from 'express';

export function readCookie(req: Request, name: string): string | undefined {
  const value: unknown = (req.cookies as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value : undefined;
}
