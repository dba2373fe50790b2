// Page-script helpers: JSON calls to our own API and small DOM utilities.
// State-changing calls send JSON; the browser adds the Origin header, which
// is what the server's CSRF check requires.

export interface ApiResult<T = unknown> {
  status: number;
  body: T;
  retryAfter: number | null;
}

export async function api<T = unknown>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<ApiResult<T>> {
  const init: RequestInit = { method, credentials: 'same-origin', headers: { Accept: 'application/json' } };
  if (method !== 'GET') {
    init.headers = { Accept: 'application/json', 'Content-Type': 'application/json' };
    init.body = JSON.stringify(body ?? {});
  }
  let res: Response;
  try {
    res = await fetch(path, init);
  } catch {
    return { status: 0, body: { error: 'Could not reach the server. Check your connection and try again.' } as T, retryAfter: null };
  }
  let parsed: unknown;
  try {
    parsed = await res.json();
  } catch {
    parsed = { error: `Unexpected answer from the server (${res.status})` };
  }
  const ra = Number(res.headers.get('retry-after'));
  return { status: res.status, body: parsed as T, retryAfter: Number.isFinite(ra) && ra > 0 ? ra : null };
}

export function errorText(result: Pick<ApiResult, 'status' | 'body'>): string {
  const b = result.body as { error?: unknown } | null;
  return b && typeof b.error === 'string' ? b.error : `Something went wrong (${result.status})`;
}

export function el<T extends HTMLElement = HTMLElement>(id: string): T {
  const node = document.getElementById(id);
  if (!node) throw new Error(`#${id} missing`);
  return node as T;
}

/** Sets text only: never HTML. */
export function text(id: string, value: string): void {
  el(id).textContent = value;
}

/** Shows exactly one of the sections. */
export function showOnly(ids: readonly string[], visible: string): void {
  for (const id of ids) el(id).hidden = id !== visible;
}

/** The header's "Signed in as … Sign out". */
export function showWho(email: string, signOut: () => void): void {
  const who = el('who');
  const name = document.createElement('span');
  name.textContent = `Signed in as ${email}`;
  const out = document.createElement('button');
  out.type = 'button';
  out.className = 'link';
  out.textContent = 'Sign out';
  out.addEventListener('click', signOut);
  who.replaceChildren(name, ' ', out);
  who.hidden = false;
}

export async function showSignedIn(): Promise<{ email: string } | null> {
  const me = await api<{ user?: { email?: string } }>('GET', '/api/account');
  const email = me.status === 200 ? me.body.user?.email : undefined;
  if (!email) return null;
  showWho(email, () => {
    void api('POST', '/api/auth/logout', {}).then(() => location.reload());
  });
  return { email };
}
