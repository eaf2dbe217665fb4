import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { canonicalJson, journalChecksumOfText } from '../../src/store/journal-checksum.ts';
import { taskInputEntryData } from '../../src/store/task-input-entry.ts';
import { createPostgresTaskStore } from '../../src/store/postgres/create-postgres-task-store.ts';
import { migratePostgres, PG_MIGRATIONS } from '../../src/store/postgres/pg-migrations.ts';
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

interface Totals {
  journal_bytes: string;
  journal_entries: number;
}

// Schema step 5 (ADR 0050): the journal's totals live beside the task's change stamp, off the wide tasks row.
describe.skipIf(url === null)('PostgreSQL journal totals (schema step 5)', () => {
  it('carries the totals of a step-4 database over, and appends go on from them', async () => {
    const schema = freshSchema('totals');
    // A database as step 4 left it, with one task holding two journal entries.
    await withClient('public', async (c) => {
      await migratePostgres(c, schema, PG_MIGRATIONS.slice(0, 4));
    });
    const input = codeInput();
    const first = canonicalJson(taskInputEntryData(input));
    const second = canonicalJson({ clock: 1 });
    const one = journalChecksumOfText('', 1, 'task_input', first);
    const two = journalChecksumOfText(one, 2, 'clock', second);
    await withClient(schema, async (c) => {
      await c.query(
        `INSERT INTO tasks (id, status, input, created_at, updated_at, journal_bytes, journal_entries)
         VALUES ('t1', 'pending', $1, 1, 1, $2, 2)`,
        [JSON.stringify(input), Buffer.byteLength(first) + Buffer.byteLength(second)],
      );
      await c.query(
        `INSERT INTO journal (task_id, seq, type, checksum, created_at, fencing_token, data)
         VALUES ('t1', 1, 'task_input', $1, 1, 0, $2), ('t1', 2, 'clock', $3, 1, 0, $4)`,
        [one, first, two, second],
      );
    });

    const store = await createPostgresTaskStore({ url: url ?? '', schema, poolSize: 2 });
    try {
      const moved = await withClient(schema, async (c) => {
        const totals = await c.query<Totals>(
          "SELECT journal_bytes, journal_entries FROM task_changes WHERE task_id = 't1'",
        );
        const columns = await c.query<{ column_name: string }>(
          `SELECT column_name FROM information_schema.columns
           WHERE table_schema = $1 AND table_name = 'tasks' AND column_name LIKE 'journal%'`,
          [schema],
        );
        return { totals: totals.rows, columns: columns.rows };
      });
      expect(moved.totals).toEqual([
        { journal_bytes: String(Buffer.byteLength(first) + Buffer.byteLength(second)), journal_entries: 2 },
      ]);
      expect(moved.columns).toEqual([]);

      // The store appends from the carried totals: the next entry is seq 3 and the totals move with it.
      const lease = await store.claimTask('w', { leaseMs: 60_000 });
      expect(lease?.taskId).toBe('t1');
      const appended = await store.appendJournal('t1', [{ type: 'clock', data: { clock: 2 } }], {
        fencingToken: lease?.fencingToken ?? -1,
      });
      expect(appended.map((e) => e.seq)).toEqual([3]);
      const after = await withClient(schema, (c) =>
        c.query<Totals & { bytes: string; n: string }>(
          `SELECT c.journal_bytes, c.journal_entries,
             (SELECT sum(octet_length(data)) FROM journal WHERE task_id = 't1') AS bytes,
             (SELECT count(*) FROM journal WHERE task_id = 't1') AS n
           FROM task_changes AS c WHERE c.task_id = 't1'`,
        ),
      );
      expect(after.rows[0]?.journal_entries).toBe(3);
      expect(after.rows[0]?.journal_bytes).toBe(after.rows[0]?.bytes);
      expect(after.rows[0]?.n).toBe('3');
    } finally {
      await store.close();
    }
  });

  it("moves a task's totals and change stamp together, and only a share lock on the task's row", async () => {
    const schema = freshSchema('totals');
    const store = await createPostgresTaskStore({ url: url ?? '', schema, poolSize: 2 });
    try {
      const task = await store.createTask(codeInput());
      const lease = await store.claimTask('w', { leaseMs: 60_000 });
      const stamp = () =>
        withClient(schema, (c) =>
          c.query<Totals & { change_seq: string; xmin: string }>(
            `SELECT c.journal_bytes, c.journal_entries, c.change_seq, t.xmin::text AS xmin
             FROM task_changes AS c JOIN tasks AS t ON t.id = c.task_id WHERE c.task_id = $1`,
            [task.id],
          ),
        ).then((r) => r.rows[0]);
      const before = await stamp();
      for (let i = 0; i < 3; i++) {
        await store.appendJournal(task.id, [{ type: 'clock', data: { clock: i } }], {
          fencingToken: lease?.fencingToken ?? -1,
        });
      }
      const after = await stamp();
      expect(after?.journal_entries).toBe((before?.journal_entries ?? 0) + 3);
      expect(Number(after?.change_seq)).toBeGreaterThan(Number(before?.change_seq));
      // The task's row itself was not rewritten by the appends (same row version).
      expect(after?.xmin).toBe(before?.xmin);
      // And a follower of the change feed sees the new entry count.
      const changes = await store.readChanges({ after: 0 });
      const mine = changes.changes.filter((c) => c.taskId === task.id).at(-1);
      expect(mine?.journalEntries).toBe(after?.journal_entries);
    } finally {
      await store.close();
    }
  });
});
