import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../server/clock.js';
import { loadConfig } from '../../../server/config.js';
import { DEVDB_BIN, startDevdb } from '../../../server/database.js';
import { loadEdge } from '../../../server/edge/analyze.js';
import { createApp } from '../../../server/http/app.js';
import { Store } from '../../../server/store/index.js';
import { createHarness, type Harness } from '../../support/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await createHarness(import.meta.filename);
});
afterAll(async () => {
  await h.close();
});

describe('health', () => {
  it('GET /healthz answers 200 while the process is up', async () => {
    const res = await h.http().get('/healthz');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok' });
  });

  it('GET /readyz answers 200 when the database answers', async () => {
    const res = await h.http().get('/readyz');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ready', database: { reachable: true } });
  });

  it.skipIf(!existsSync(DEVDB_BIN))('GET /readyz answers 503 once the database is stopped', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'deviceid-ready-'));
    const db = await startDevdb({ dataDir: dir, devdb: { backend: 'sqlite', postgresqlUrl: undefined } });
    const store = await Store.open({ uri: db.uri, dbName: 'ready' });
    const config = loadConfig({ DATA_DIR: dir });
    const logger = pino({ level: 'silent' });
    const edge = await loadEdge(config, logger);
    const app = createApp({ config, store, clock: new ManualClock(), logger, edge, launcher: db as Required<typeof db> });
    try {
      expect((await request(app).get('/readyz')).body.database).toEqual({ reachable: true, launcher: { state: 'running', restarts: 0, lastExit: null } });
      await db.stop();
      const res = await request(app).get('/readyz');
      expect(res.status).toBe(503);
      expect(res.body).toEqual({
        error: 'Database not reachable',
        code: 'service_unavailable',
        database: { reachable: false, launcher: { state: 'stopped', restarts: 0, lastExit: null } },
      });
      expect((await request(app).get('/healthz')).status).toBe(200);
    } finally {
      edge.close();
      await store.close();
      await db.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
