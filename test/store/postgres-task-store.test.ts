import { describe, it } from 'vitest';
import { describeTaskStoreConformance } from '../conformance/task-store-conformance.ts';
import {
  createTestPostgresStore,
  postgresSkipReason,
  postgresUrl,
  tamperPostgres,
} from '../support/postgres-store.ts';
import type { PostgresTaskStore } from '../../src/store/postgres/pg-task-store.ts';
import type { TaskStore } from '../../src/index.ts';

const schemaOf = (store: TaskStore): string => (store as PostgresTaskStore).schema;

if (postgresUrl() === null) {
  describe('PostgreSQL task store', () => {
    it.skip(postgresSkipReason(), () => undefined);
  });
} else {
  describeTaskStoreConformance('PostgreSQL', () => createTestPostgresStore(), {
    corrupt: (store, taskId, seq) =>
      tamperPostgres(schemaOf(store), async (c) => {
        await c.query('UPDATE journal SET data = $1 WHERE task_id = $2 AND seq = $3', [
          '{"clock":999}',
          taskId,
          seq,
        ]);
      }),
    garbleRow: (store, taskId) =>
      tamperPostgres(schemaOf(store), async (c) => {
        await c.query(`UPDATE tasks SET input = '{"kind":' WHERE id = $1`, [taskId]);
      }),
  });
}
