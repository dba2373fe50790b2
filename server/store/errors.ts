import { MongoServerError } from 'mongodb';

/** E11000 on MongoDB and FerretDB alike (FerretDB omits keyPattern/keyValue). */
export function isDuplicateKey(err: unknown): boolean {
  return err instanceof MongoServerError && err.code === 11000;
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
