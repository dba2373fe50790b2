import { MongoServerError } from 'mongodb';

/** E11000 on MongoDB and FerretDB alike (FerretDB omits keyPattern/keyValue). */
export function isDuplicateKey(err: unknown): boolean {
  return err instanceof MongoServerError && err.code === 11000;
}
