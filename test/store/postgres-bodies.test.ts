// The PostgreSQL store against the body store conformance suite.
import { describe, it } from 'vitest';
import { describeBodyStoreConformance } from '../conformance/body-store-conformance.ts';
import type { BodyTaskStore } from '../conformance/body-store-conformance.ts';
import type { PostgresTaskStore } from '../../src/store/postgres/pg-task-store.ts';
import { createTestPostgresStore, postgresSkipReason, postgresUrl } from '../support/postgres-store.ts';

if (postgresUrl() === null) {
  describe('PostgreSQL body store', () => {
    it.skip(postgresSkipReason(), () => undefined);
  });
} else {
  describeBodyStoreConformance(
    'PostgreSQL',
    () => createTestPostgresStore(),
    async (store: BodyTaskStore) => {
      const result = await (store as PostgresTaskStore).pool.query<{ n: string }>(
        'SELECT count(*) AS n FROM body_chunks',
      );
      return Number(result.rows[0]?.n);
    },
  );
}
