// The UsageStore conformance suite (ADR 0045) on both stores: SQLite files (two connections on one file are two
// servers) and PostgreSQL schemas (two pools on one schema).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSqliteTaskStore } from '../../src/store/index.ts';
import { migrateSqliteToPostgres } from '../../src/store/postgres/migrate-from-sqlite.ts';
import type { PostgresTaskStore } from '../../src/store/postgres/pg-task-store.ts';
import { describeUsageStoreConformance } from '../conformance/usage-store-conformance.ts';
import type { ClosableUsageStore } from '../conformance/usage-store-conformance.ts';
import {
  createTestPostgresStore,
  freshSchema,
  postgresSkipReason,
  postgresUrl,
} from '../support/postgres-store.ts';

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

  describe('codecall migrate and usage', () => {
    it("copies the tenants' buckets and counts into PostgreSQL, where they go on", async () => {
      const path = join(dir, 'to-migrate.db');
      const sqlite = await createSqliteTaskStore({ path });
      const now = Date.UTC(2026, 0, 1);
      const rate = { perSecond: 1 / 3, burst: 2 };
      const quota = { max: 2, periodStart: now, periodEnd: now + 3_600_000 };
      const take = (store: ClosableUsageStore, at: number) =>
        store.takeUsage({ tenant: 'acme', tool: 'web.search', now: at, rate, quota });
      expect((await take(sqlite, now)).ok).toBe(true);
      await sqlite.close();
      const schema = freshSchema('usage');
      const report = await migrateSqliteToPostgres({ from: path, url: postgresUrl() ?? '', schema });
      expect(report.tables.filter((t) => t.name.startsWith('tool_'))).toMatchObject([
        { name: 'tool_rate_buckets', rows: 1 },
        { name: 'tool_quota_counts', rows: 1 },
      ]);
      const pg = await createTestPostgresStore({ schema });
      try {
        // One token left (and a third of one a second), one call of the quota.
        expect((await take(pg, now + 1000)).ok).toBe(true);
        expect(await take(pg, now + 2000)).toMatchObject({ ok: false, limit: 'rate' });
        expect(await take(pg, now + 9000)).toMatchObject({ ok: false, limit: 'quota' });
      } finally {
        await pg.close();
      }
    });
  });
}
