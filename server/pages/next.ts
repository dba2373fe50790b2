// Where to go after signing in: only a path on this same origin (no
// `//host`, no backslashes, no control characters), else null. Used by the
// server and bundled into the login page script.
export function safeNext(raw: string | null | undefined, origin: string): string | null {
  if (!raw || raw.length > 2048) return null;
  if (!raw.startsWith('/') || raw.startsWith('//')) return null;
  // Browsers read `\` as `/` (so `/\evil.example` is another host); controls hide tricks.
  // eslint-disable-next-line no-control-regex
  if (/[\\\u0000-\u001f\u007f]/.test(raw)) return null;
  let url: URL;
  try {
    url = new URL(raw, origin);
  } catch {
    return null;
  }
  if (url.origin !== origin) return null;
  return url.pathname + url.search + url.hash;
}
