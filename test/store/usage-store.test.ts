// The UsageStore conformance suite (ADR 0045) on both stores: SQLite files (two connections on one file are two
// servers) and PostgreSQL schemas (two pools on one schema).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { createSqliteTaskStore } from '../../src/store/index.ts';
import type { PostgresTaskStore } from '../../src/store/postgres/pg-task-store.ts';
import { describeUsageStoreConformance } from '../conformance/usage-store-conformance.ts';
import type { ClosableUsageStore } from '../conformance/usage-store-conformance.ts';
import { createTestPostgresStore, postgresSkipReason, postgresUrl } from '../support/postgres-store.ts';

let dir = '';
let files = 0;
const paths = new Map<object, string>();

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'codecall-usage-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const sqliteOn = async (path: string): Promise<ClosableUsageStore> => {
  const store = await createSqliteTaskStore({ path });
  paths.set(store, path);
  return store;
};

describeUsageStoreConformance('SQLite', {
  fresh: () => sqliteOn(join(dir, `usage-${++files}.db`)),
  sibling: (store) => sqliteOn(paths.get(store) ?? ''),
});

if (postgresUrl() === null) {
  describe('UsageStore conformance: PostgreSQL', () => {
    it.skip(postgresSkipReason(), () => undefined);
  });
} else {
  describeUsageStoreConformance('PostgreSQL', {
    fresh: () => createTestPostgresStore(),
    sibling: (store) => createTestPostgresStore({ schema: (store as PostgresTaskStore).schema }),
  });
}
