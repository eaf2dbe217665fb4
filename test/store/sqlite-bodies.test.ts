// The SQLite store against the body store conformance suite.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll } from 'vitest';
import { createSqliteTaskStore } from '../../src/store/index.ts';
import { describeBodyStoreConformance } from '../conformance/body-store-conformance.ts';

let dir = '';
let fileCount = 0;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'codecall-bodies-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const path = () => join(dir, `b-${fileCount}.db`);

describeBodyStoreConformance(
  'SQLite',
  () => {
    fileCount += 1;
    return createSqliteTaskStore({ path: path() });
  },
  () => {
    const db = new Database(path(), { readonly: true });
    try {
      return Promise.resolve((db.prepare('SELECT count(*) AS n FROM body_chunks').get() as { n: number }).n);
    } finally {
      db.close();
    }
  },
);
