import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Lease, NewTaskAttributes } from '../../src/spec/index.ts';
import { createSqliteTaskStore } from '../../src/store/index.ts';
import type { SqliteTaskStore } from '../../src/store/index.ts';
import { describeServiceStoreConformance } from '../conformance/service-store-conformance.ts';
import type { OutboxRow, ServiceTaskStore } from '../conformance/service-store-conformance.ts';
import { codeInput, LEASE, T0 } from '../conformance/task-store-support.ts';

let dir = '';
let fileCount = 0;
const paths = new Map<object, string>();

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'codecall-service-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function openStore(): Promise<SqliteTaskStore> {
  const path = join(dir, `service-${++fileCount}.db`);
  const store = await createSqliteTaskStore({ path });
  paths.set(store, path);
  return store;
}

/** A second connection, as another process (or a stray tool) would open the file. */
function withRaw<T>(store: ServiceTaskStore, fn: (db: Database.Database) => T): T {
  const db = new Database(paths.get(store) ?? '');
  try {
    return fn(db);
  } finally {
    db.close();
  }
}

describeServiceStoreConformance('SQLite', openStore, {
  reopen: (store) => createSqliteTaskStore({ path: paths.get(store) ?? '' }),
  storedKeys: (store) =>
    Promise.resolve(withRaw(store, (db) => JSON.stringify(db.prepare('SELECT * FROM api_keys').all()))),
  outboxRow: (store, id) =>
    Promise.resolve(
      withRaw(
        store,
        (db) =>
          db
            .prepare(
              'SELECT state, attempts, body, last_error, next_attempt_at, finished_at FROM webhook_outbox WHERE id = ?',
            )
            .get(id) as OutboxRow | undefined,
      ),
    ),
});

describe('append-only journal and audit log', () => {
  let store: SqliteTaskStore;
  beforeEach(async () => {
    store = await openStore();
  });
  afterEach(async () => {
    await store.close();
  });

  async function running(now: number, attributes: NewTaskAttributes = {}): Promise<Lease> {
    const task = await store.createTask(codeInput(), { now, attributes });
    const lease = await store.claimTask('w', { leaseMs: LEASE, now, taskId: task.id });
    if (lease === null) throw new Error('not claimed');
    return lease;
  }

  it('refuses UPDATE and DELETE of journal and audit rows from another connection', async () => {
    const lease = await running(T0);
    await store.appendJournal(lease.taskId, [{ type: 'clock', data: { clock: 1 } }], {
      fencingToken: lease.fencingToken,
    });
    const attempts = [
      ['UPDATE journal SET data = ? WHERE task_id = ?', ['{"clock":2}', lease.taskId], 'the journal'],
      ['DELETE FROM journal WHERE task_id = ?', [lease.taskId], 'the journal'],
      ['UPDATE audit_log SET data = ? WHERE task_id = ?', ['{}', lease.taskId], 'the audit log'],
      ['DELETE FROM audit_log WHERE task_id = ?', [lease.taskId], 'the audit log'],
      // Deleting the task would cascade into both.
      ['DELETE FROM tasks WHERE id = ?', [lease.taskId], ''],
    ] as const;
    withRaw(store, (db) => {
      for (const [sql, params, log] of attempts) {
        expect(() => db.prepare(sql).run(...params)).toThrow(`${log} is append-only`);
      }
    });
    const clocks = (await store.readJournal(lease.taskId)).map((e) =>
      e.type === 'clock' ? e.data.clock : null,
    );
    expect(clocks).toEqual([null, 1]);
    expect((await store.readAudit(lease.taskId)).map((e) => e.type)).toEqual(['created', 'status']);
    expect(await store.getTask(lease.taskId)).not.toBeNull();
  });
});
