// The PostgreSQL store against the service store conformance suite, and the webhook claims of several nodes.
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { describeServiceStoreConformance } from '../conformance/service-store-conformance.ts';
import type { OutboxRow, ServiceTaskStore } from '../conformance/service-store-conformance.ts';
import { codeInput, T0 } from '../conformance/task-store-support.ts';
import { createTestPostgresStore, postgresSkipReason, postgresUrl } from '../support/postgres-store.ts';
import type { PostgresTaskStore } from '../../src/store/postgres/pg-task-store.ts';

const schemaOf = (store: ServiceTaskStore): string => (store as PostgresTaskStore).schema;

/** Rows read on a connection of their own, as another node (or psql) would see them. */
async function rawRows<R extends pg.QueryResultRow>(
  store: ServiceTaskStore,
  text: string,
  values: unknown[] = [],
): Promise<R[]> {
  const client = new pg.Client({
    connectionString: postgresUrl() ?? '',
    options: `-c search_path=${schemaOf(store)}`,
  });
  await client.connect();
  try {
    return (await client.query<R>(text, values)).rows;
  } finally {
    await client.end();
  }
}

if (postgresUrl() === null) {
  describe('PostgreSQL service store', () => {
    it.skip(postgresSkipReason(), () => undefined);
  });
} else {
  describeServiceStoreConformance('PostgreSQL', () => createTestPostgresStore(), {
    reopen: (store) => createTestPostgresStore({ schema: schemaOf(store) }),
    storedKeys: async (store) => JSON.stringify(await rawRows(store, 'SELECT * FROM api_keys')),
    outboxRow: async (store, id) => {
      const rows = await rawRows<OutboxRow>(
        store,
        `SELECT state, attempts, body, last_error, next_attempt_at::float8 AS next_attempt_at,
           finished_at::float8 AS finished_at FROM webhook_outbox WHERE id = $1`,
        [id],
      );
      return rows[0];
    },
  });

  describe('PostgreSQL webhook claims', () => {
    const HOOK = 'https://hooks.example/task';
    // Two nodes on one database.
    let a: PostgresTaskStore;
    let b: PostgresTaskStore;
    beforeEach(async () => {
      a = await createTestPostgresStore();
      b = await createTestPostgresStore({ schema: a.schema });
    });
    afterEach(async () => {
      await Promise.all([a.close(), b.close()]);
    });

    async function messages(n: number): Promise<void> {
      for (let i = 0; i < n; i++) {
        const task = await a.createTask(codeInput(), { now: T0 + i, attributes: { callbackUrl: HOOK } });
        await a.updateTask(task.id, { status: 'cancelled' }, { expectedVersion: task.version, now: T0 + i });
      }
    }

    it('gives each due message to one dispatcher of several nodes claiming at once', async () => {
      await messages(40);
      const claims = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          (i % 2 === 0 ? a : b).dueWebhooks({
            now: T0 + 100,
            limit: 10,
            claim: { owner: `d${i}`, leaseMs: 1000 },
          }),
        ),
      );
      const ids = claims.flatMap((c) => c.map((m) => m.id));
      expect(ids).toHaveLength(40);
      expect(new Set(ids).size).toBe(40);
      // All are held: nothing is due to anyone until the claims expire.
      expect(
        await b.dueWebhooks({ now: T0 + 200, limit: 100, claim: { owner: 'x', leaseMs: 1000 } }),
      ).toEqual([]);
      expect(await a.dueWebhooks({ now: T0 + 1100, limit: 100 })).toHaveLength(40);
    });

    it('lets a claim expire, and a release or an attempt end it', async () => {
      await messages(3);
      const claim = (owner: string, now: number) =>
        b.dueWebhooks({ now, limit: 10, claim: { owner, leaseMs: 100 } });
      const held = await a.dueWebhooks({ now: T0 + 10, limit: 10, claim: { owner: 'a', leaseMs: 100 } });
      expect(held.map((m) => m.taskId)).toHaveLength(3);
      const [m1, m2, m3] = held;
      if (m1 === undefined || m2 === undefined || m3 === undefined) throw new Error('missing messages');
      expect(await claim('b', T0 + 50)).toEqual([]);
      // A release by another owner does nothing; the holder's makes the message due again at once.
      await b.releaseWebhook(m1.id, 'b');
      expect(await claim('b', T0 + 60)).toEqual([]);
      await a.releaseWebhook(m1.id, 'a');
      await a.recordWebhookAttempt(m2.id, {
        outcome: 'retry',
        body: 'x',
        nextAttemptAt: T0 + 70,
        error: 'e',
      });
      expect((await claim('b', T0 + 70)).map((m) => m.id)).toEqual([m1.id, m2.id]);
      // m3's claim by `a` expires at T0 + 110.
      expect((await claim('c', T0 + 110)).map((m) => m.id)).toEqual([m3.id]);
    });
  });
}
