// First-party device token: a random id the agent keeps in every storage it
// can use, so clearing one of them does not lose the device. Read order is
// localStorage, cookie, IndexedDB; whatever is found is copied to the others.
import type { SignalValues } from '@deviceid/contract';
import type { Collectors } from '../collector.js';

type Storage = NonNullable<SignalValues['deviceToken']['storage']>;
interface Stored {
  token: string;
  createdAt: number;
}

const KEY = '_did';
const DB = 'deviceid';
const STORE = 'kv';
/** Chromium caps cookie lifetime at 400 days. */
const COOKIE_MAX_AGE = 400 * 24 * 3600;

/** Serialised as `<token>.<createdAt base 36>` so a cookie holds it without escaping. */
const encode = (s: Stored): string => `${s.token}.${s.createdAt.toString(36)}`;
function decode(raw: unknown): Stored | null {
  const m = typeof raw === 'string' ? /^([A-Za-z0-9_-]{16,64})\.([0-9a-z]{1,12})$/.exec(raw) : null;
  return m ? { token: m[1]!, createdAt: parseInt(m[2]!, 36) } : null;
}

function newToken(): Stored {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  const token = btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
  return { token, createdAt: Date.now() };
}

const local = {
  read: (): string | null => localStorage.getItem(KEY),
  write: (v: string): void => localStorage.setItem(KEY, v),
};

const cookie = {
  read: (): string | null => {
    const m = new RegExp(`(?:^|;\\s*)${KEY}=([^;]*)`).exec(document.cookie);
    return m ? decodeURIComponent(m[1]!) : null;
  },
  write: (v: string): void => {
    const secure = location.protocol === 'https:' ? '; Secure' : '';
    document.cookie = `${KEY}=${v}; Max-Age=${COOKIE_MAX_AGE}; Path=/; SameSite=Lax${secure}`;
    // Throw when the browser refused it, so the caller knows the cookie is not a copy.
    if (cookie.read() !== v) throw new Error('cookie rejected');
  },
};

function idbRequest<T>(req: IDBRequest<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error ?? new Error('IndexedDB request failed'));
  });
}

async function idbOpen(): Promise<IDBDatabase> {
  const req = indexedDB.open(DB, 1);
  req.onupgradeneeded = () => req.result.createObjectStore(STORE);
  return idbRequest(req);
}

async function idbUse<T>(mode: IDBTransactionMode, fn: (store: IDBObjectStore) => IDBRequest<T>): Promise<T> {
  const db = await idbOpen();
  try {
    return await idbRequest(fn(db.transaction(STORE, mode).objectStore(STORE)));
  } finally {
    db.close();
  }
}

const idb = {
  read: (): Promise<unknown> => idbUse('readonly', (s) => s.get(KEY)),
  write: (v: string): Promise<unknown> => idbUse('readwrite', (s) => s.put(v, KEY)),
};

const STORES: Array<[Storage, { read(): unknown; write(v: string): unknown }]> = [
  ['localStorage', local],
  ['cookie', cookie],
  ['indexedDB', idb],
];

/** Any storage may be disabled or throw (private modes, blocked cookies); reading one then finds nothing. */
async function read(store: { read(): unknown }): Promise<Stored | null> {
  try {
    return decode(await store.read());
  } catch {
    return null;
  }
}

async function write(store: { write(v: string): unknown }, value: string): Promise<boolean> {
  try {
    await store.write(value);
    return true;
  } catch {
    return false;
  }
}

type Value = SignalValues['deviceToken'];

async function readOrCreate(): Promise<Value> {
  let found: { stored: Stored; from: Storage } | null = null;
  for (const [name, store] of STORES) {
    const stored = await read(store);
    if (stored) {
      found = { stored, from: name };
      break;
    }
  }
  const stored = found ? found.stored : newToken();
  // Always rewrite every copy: restores cleared ones and renews the cookie's expiry.
  const ok = await Promise.all(STORES.map(([, store]) => write(store, encode(stored))));
  const from = found ? found.from : STORES.find((_, i) => ok[i])?.[0];
  if (!from) return { token: null, storage: null, createdAt: null };
  return { token: stored.token, storage: from, createdAt: stored.createdAt };
}

/** Shared by concurrent get() calls, which would otherwise each mint a different token. */
let inFlight: Promise<Value> | null = null;

export const deviceTokenCollectors: Collectors<'deviceToken'> = {
  deviceToken: {
    // IndexedDB can be slow to open on first use.
    timeout: 2000,
    collect() {
      inFlight ??= readOrCreate().finally(() => {
        inFlight = null;
      });
      return inFlight;
    },
  },
};
