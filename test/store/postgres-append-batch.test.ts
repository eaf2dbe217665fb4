import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createPostgresTaskStore } from '../../src/store/postgres/create-postgres-task-store.ts';
import { journalChecksumOfText, canonicalJson } from '../../src/store/journal-checksum.ts';
import { codeInput } from '../conformance/task-store-conformance.ts';
import { freshSchema, postgresSkipReason, postgresUrl } from '../support/postgres-store.ts';

const url = postgresUrl();
if (url === null) console.warn(postgresSkipReason());

async function withClient<T>(schema: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url ?? '', options: `-c search_path=${schema}` });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/**
 * What one task stream costs the database (issue 20, ADR 0050): the appends that are outstanding together go as
 * one multi-row statement in one commit. Counted by the database itself: the transaction ids of the journal's rows (xmin), and a statement trigger of this test's own
 * on the journal that counts INSERT statements.
 */
describe.skipIf(url === null)('PostgreSQL appends of one task stream', () => {
  const lanes = 16;
  const rounds = 6;

  it('sends the appends outstanding together as one INSERT statement in one commit, in call order', async () => {
    const schema = freshSchema('batch');
    const store = await createPostgresTaskStore({ url: url ?? '', schema, poolSize: 4 });
    try {
      const task = await store.createTask(codeInput());
      const lease = await store.claimTask('w', { leaseMs: 60_000 });
      const token = lease?.fencingToken ?? -1;
      // The first append of a lease reads the head under the row lock (the slow path); the rest go fast.
      await store.appendJournal(task.id, [{ type: 'clock', data: { clock: -1 } }], { fencingToken: token });
      await withClient(schema, async (c) => {
        await c.query('CREATE TABLE test_inserts (n integer NOT NULL)');
        await c.query(
          `CREATE FUNCTION test_count_insert() RETURNS trigger LANGUAGE plpgsql AS $$
           BEGIN INSERT INTO test_inserts VALUES (1); RETURN NULL; END $$`,
        );
        await c.query(
          'CREATE TRIGGER test_count AFTER INSERT ON journal FOR EACH STATEMENT EXECUTE FUNCTION test_count_insert()',
        );
      });
      const head = (await store.readJournal(task.id)).at(-1)?.seq ?? 0;

      // 16 lanes, each awaiting its append before the next, as the runner's calls of a Promise.all fan-out do.
      let clock = 0;
      const order: number[] = [];
      await Promise.all(
        Array.from({ length: lanes }, async () => {
          for (let i = 0; i < rounds; i++) {
            const mine = clock++;
            const [entry] = await store.appendJournal(task.id, [{ type: 'clock', data: { clock: mine } }], {
              fencingToken: token,
            });
            order[(entry?.seq ?? 0) - head - 1] = mine;
          }
        }),
      );

      const counts = await withClient(schema, async (c) => {
        const tx = await c.query<{ n: number }>(
          'SELECT count(DISTINCT xmin::text)::int AS n FROM journal WHERE task_id = $1 AND seq > $2',
          [task.id, head],
        );
        const inserts = await c.query<{ n: number }>('SELECT count(*)::int AS n FROM test_inserts');
        return { transactions: tx.rows[0]?.n, statements: inserts.rows[0]?.n };
      });
      // Every lane's next append waits for its last: each round is one batch of all 16.
      expect(counts).toEqual({ transactions: rounds, statements: rounds });
      // Seqs follow the order the calls were made in.
      expect(order).toEqual(Array.from({ length: lanes * rounds }, (_, i) => i));

      // The chain is whole: every checksum follows from the one before it.
      const journal = await store.readJournal(task.id);
      let prev = '';
      for (const entry of journal) {
        expect(entry.checksum).toBe(
          journalChecksumOfText(prev, entry.seq, entry.type, canonicalJson(entry.data)),
        );
        prev = entry.checksum;
      }
    } finally {
      await store.close();
    }
  });
});
