// Where `deviceid login` keeps keys: one JSON file only the user can read
// (0600 in a 0700 directory), one entry per service URL. Written atomically
// (temporary file + rename), so a crash never leaves half a file.
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

export const CREDENTIALS_ENV = 'DEVICEID_CREDENTIALS_FILE';
export const API_KEY_ENV = 'DEVICEID_API_KEY';

export interface StoredCredential {
  apiKey: string;
  /** The client name sent with the grant; the key is listed as `<clientName> (CLI)`. */
  clientName: string;
  /** ISO 8601. */
  createdAt: string;
}

interface CredentialsFile {
  version: 1;
  /** Keyed by the service's base URL. */
  servers: Record<string, StoredCredential>;
}

export class CredentialsFileError extends Error {
  constructor(
    message: string,
    readonly path: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'CredentialsFileError';
  }
}

/**
 * `$DEVICEID_CREDENTIALS_FILE`, else `$XDG_CONFIG_HOME/deviceid/credentials.json`,
 * else `%APPDATA%\deviceid\credentials.json` on Windows, else
 * `~/.config/deviceid/credentials.json`.
 */
export function credentialsPath(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): string {
  if (env[CREDENTIALS_ENV]) return env[CREDENTIALS_ENV];
  if (env.XDG_CONFIG_HOME) return join(env.XDG_CONFIG_HOME, 'deviceid', 'credentials.json');
  if (platform === 'win32' && env.APPDATA) return join(env.APPDATA, 'deviceid', 'credentials.json');
  return join(homedir(), '.config', 'deviceid', 'credentials.json');
}

const serverKey = (baseUrl: string) => baseUrl.replace(/\/+$/, '');

async function readFileJson(path: string): Promise<CredentialsFile> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { version: 1, servers: {} };
    throw new CredentialsFileError(`Cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`, path, { cause: err });
  }
  try {
    const parsed = JSON.parse(text) as Partial<CredentialsFile>;
    if (parsed && typeof parsed === 'object' && parsed.servers && typeof parsed.servers === 'object') {
      return { version: 1, servers: parsed.servers };
    }
  } catch {
    // fall through
  }
  // Never overwrite a file we do not understand: it may hold someone's keys.
  throw new CredentialsFileError(`${path} is not a deviceid credentials file; move it away and try again`, path);
}

/** The stored credential for a service, if any. */
export async function loadCredential(baseUrl: string, path = credentialsPath()): Promise<StoredCredential | undefined> {
  return (await readFileJson(path)).servers[serverKey(baseUrl)];
}

/** `$DEVICEID_API_KEY`, else the key stored by `deviceid login` for this service. */
export async function loadApiKey(baseUrl: string, env: NodeJS.ProcessEnv = process.env): Promise<string | undefined> {
  if (env[API_KEY_ENV]) return env[API_KEY_ENV];
  return (await loadCredential(baseUrl, credentialsPath(env)))?.apiKey;
}

async function writePrivate(path: string, text: string): Promise<void> {
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const fh = await open(tmp, 'wx', 0o600);
  try {
    // The umask may have narrowed the mode further, never widened it; make it exact.
    await fh.chmod(0o600);
    await fh.writeFile(text, 'utf8');
    await fh.sync();
  } catch (err) {
    await fh.close().catch(() => undefined);
    await rm(tmp, { force: true });
    throw err;
  }
  await fh.close();
  try {
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}

async function ensureDir(path: string): Promise<void> {
  const dir = dirname(path);
  const created = await mkdir(dir, { recursive: true, mode: 0o700 });
  // Only tighten a directory we created; an existing one is the user's choice.
  if (created !== undefined) await chmod(dir, 0o700);
}

/** Checks before a login that the file can be written, so a new key is never lost. */
export async function checkWritable(path = credentialsPath()): Promise<void> {
  try {
    await ensureDir(path);
    await readFileJson(path);
    const probe = `${path}.${process.pid}.probe`;
    const fh = await open(probe, 'wx', 0o600);
    await fh.close();
    await rm(probe, { force: true });
  } catch (err) {
    if (err instanceof CredentialsFileError) throw err;
    throw new CredentialsFileError(`Cannot write ${path}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`, path, { cause: err });
  }
}

/** Stores (or replaces) the credential for a service; returns the file path. The file is mode 0600. */
export async function saveCredential(baseUrl: string, credential: StoredCredential, path = credentialsPath()): Promise<string> {
  try {
    await ensureDir(path);
    const file = await readFileJson(path);
    file.servers[serverKey(baseUrl)] = credential;
    await writePrivate(path, `${JSON.stringify(file, null, 2)}\n`);
    return path;
  } catch (err) {
    if (err instanceof CredentialsFileError) throw err;
    throw new CredentialsFileError(`Cannot write ${path}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`, path, { cause: err });
  }
}

/** Forgets the credential for a service (other services' entries stay); false when there was none. */
export async function removeCredential(baseUrl: string, path = credentialsPath()): Promise<boolean> {
  try {
    const file = await readFileJson(path);
    if (!(serverKey(baseUrl) in file.servers)) return false;
    delete file.servers[serverKey(baseUrl)];
    await writePrivate(path, `${JSON.stringify(file, null, 2)}\n`);
    return true;
  } catch (err) {
    if (err instanceof CredentialsFileError) throw err;
    throw new CredentialsFileError(`Cannot write ${path}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`, path, { cause: err });
  }
}
