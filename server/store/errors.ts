import {
  MongoBulkWriteError,
  MongoError,
  MongoNetworkError,
  MongoNetworkTimeoutError,
  MongoServerError,
  MongoServerSelectionError,
  type Collection,
  type Document,
  type OptionalUnlessRequiredId,
} from 'mongodb';

/** E11000 on MongoDB and FerretDB alike (FerretDB omits keyPattern/keyValue). */
export function isDuplicateKey(err: unknown): boolean {
  return err instanceof MongoServerError && err.code === 11000;
}

/**
 * Inserts `doc` unless a document with its `_id` exists: true when this call
 * inserted it. A unique insert is atomic on FerretDB and MongoDB alike, so of
 * concurrent callers exactly one gets true (the claims of this store).
 */
export async function insertUnique<T extends Document>(col: Collection<T>, doc: OptionalUnlessRequiredId<T>): Promise<boolean> {
  try {
    await col.insertOne(doc);
    return true;
  } catch (err) {
    if (isDuplicateKey(err)) return false;
    throw err;
  }
}

/**
 * Runs an upsert, retrying once when it loses an insert race: concurrent
 * upserts of one `_id` can fail with E11000 (on MongoDB, and always on
 * FerretDB, whose upserts are not atomic); the retry finds the document and
 * updates it.
 */
export async function upsert<T>(op: () => Promise<T>): Promise<T> {
  try {
    return await op();
  } catch (err) {
    if (!isDuplicateKey(err)) throw err;
    return op();
  }
}

/**
 * Socket errors the driver sometimes lets through unwrapped (EPIPE when it
 * writes to a connection the server just closed). The service opens no other
 * outbound connections, so these always come from the database.
 */
const SOCKET_ERROR_CODES = new Set(['EPIPE', 'ECONNRESET', 'ECONNREFUSED', 'ECONNABORTED', 'ETIMEDOUT']);

/** True for a failure to reach the server at all (not a timeout, not a server's answer). */
export function isConnectionFailure(err: unknown): boolean {
  if (err instanceof MongoNetworkTimeoutError) return false;
  if (err instanceof MongoNetworkError || err instanceof MongoServerSelectionError) return true;
  return err instanceof Error && SOCKET_ERROR_CODES.has(String((err as NodeJS.ErrnoException).code));
}

/** Server error codes of a server that is shutting down, stepping down or past its time limit. */
const TRANSIENT_SERVER_CODES = new Set([50, 91, 189, 10107, 11600, 11602, 13435, 13436]);

/** Thrown without a round trip while the database is known to be unreachable. */
export class DatabaseUnavailableError extends Error {
  constructor() {
    super('database unreachable');
    this.name = 'DatabaseUnavailableError';
  }
}

/**
 * True when an error means "the database cannot be reached right now" (gone,
 * frozen past the operation time limit, shutting down), as opposed to a bug
 * or a bad request: the client should retry later (503).
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  if (err instanceof DatabaseUnavailableError || err instanceof MongoNetworkError || isConnectionFailure(err)) return true;
  // The driver labels network failures (also when wrapped, e.g. in a bulk write's error).
  if (err instanceof MongoError && (err.hasErrorLabel('ResetPool') || err.hasErrorLabel('RetryableWriteError'))) return true;
  if (err instanceof Error && err.cause !== undefined && err.cause !== err && isDatabaseUnavailable(err.cause)) return true;
  // A bulk write's error carries the failure that stopped it (a network timeout while the database is frozen).
  const response = err instanceof MongoBulkWriteError ? (err.errorResponse as unknown) : undefined;
  if (response instanceof Error && response !== err && isDatabaseUnavailable(response)) return true;
  if (err instanceof MongoServerError) return TRANSIENT_SERVER_CODES.has(Number(err.code));
  return err instanceof MongoError && err.name === 'MongoWaitQueueTimeoutError';
}
