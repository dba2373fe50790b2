// One database server for the whole run: MONGODB_URI when set (real MongoDB),
// otherwise a FerretDB launcher on SQLite in a temporary directory. Each test
// file then uses its own database name on it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { startDevdb, type Database } from '../../server/database.js';

declare module 'vitest' {
  export interface ProvidedContext {
    mongoUri: string;
  }
}

let db: Database | undefined;
let dir: string | undefined;

export async function setup(project: TestProject): Promise<void> {
  if (process.env.MONGODB_URI) {
    project.provide('mongoUri', process.env.MONGODB_URI);
    return;
  }
  dir = mkdtempSync(join(tmpdir(), 'deviceid-test-'));
  db = await startDevdb({ dataDir: dir, devdb: { backend: 'sqlite', postgresqlUrl: undefined } });
  project.provide('mongoUri', db.uri);
}

export async function teardown(): Promise<void> {
  await db?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
}
