// Where to go after signing in: only a path on this same origin, else null.
// Used by the server and bundled into the login page script.
//
// The input is checked, then normalised by the URL parser, and the result is
// checked again: normalising can turn a harmless-looking path into another
// host (`/.//evil.example` becomes `//evil.example`, a protocol-relative
// URL). What is returned is what was validated.
export const NEXT_MAX_CHARS = 2048;

/** A path that stays on the origin it is resolved against: one leading `/`, not `//`. */
const isLocalPath = (p: string) => p.startsWith('/') && p[1] !== '/';

export function safeNext(raw: string | null | undefined, origin: string): string | null {
  if (!raw || raw.length > NEXT_MAX_CHARS || !isLocalPath(raw)) return null;
  // Refuse rather than normalise: backslashes are slashes to browsers (`/\host`
  // is another host), and URL parsers silently drop tabs and newlines.
  // eslint-disable-next-line no-control-regex
  if (/[\\\u0000-\u001f\u007f]/.test(raw)) return null;
  const url = new URL(raw, origin);
  const result = url.pathname + url.search + url.hash;
  return isLocalPath(result) ? result : null;
}
