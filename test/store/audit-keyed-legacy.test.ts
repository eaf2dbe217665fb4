import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSqliteTaskStore, journalChecksum, verifyDatabaseAudit } from '../../src/store/index.ts';
import { MIGRATIONS, migrate } from '../../src/store/sqlite/migrations.ts';
import { openForTampering } from './tamper.ts';

// A database from before the keyed audit chain (ADR 0030): the migration adds the columns and tables, the first
// keyed open gives each task a signed head marking its rows so far as legacy (and vouching for its fields then),
// rows appended since are keyed. Legacy rows verify by the unkeyed chain; stripping or editing what the head
// vouches for still shows.

const KEY = Buffer.from('a'.repeat(64));
// The step that brought the keyed chain (found by what it does: another branch may add steps before it).
const KEYED_STEP = MIGRATIONS.findIndex((m) => m.includes('CREATE TABLE audit_heads'));

describe('the keyed audit chain over a database from before it', () => {
  let dir: string;
  let path: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'codecall-audit-legacy-'));
    path = join(dir, 'tasks.db');
    // The schema as it was before the step, one task written the way the code of then wrote it.
    const db = new Database(path);
    migrate(db, MIGRATIONS.slice(0, KEYED_STEP));
    db.prepare(
      `INSERT INTO tasks (id, status, input, created_at, updated_at, tenant) VALUES ('task_old', 'pending', ?, 10, 10, 'acme')`,
    ).run(JSON.stringify({ kind: 'code', code: 'return 1', language: 'javascript', seed: 1 }));
    const data = { tenant: 'acme', actor: 'system', batch_id: null };
    db.prepare(
      `INSERT INTO audit_log (task_id, seq, type, data, checksum, created_at) VALUES ('task_old', 1, 'created', ?, ?, 10)`,
    ).run(JSON.stringify(data), journalChecksum('', 1, 'created', data));
    db.close();
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('keeps old rows as legacy, keys the rows after, and verifies clean', async () => {
    expect(KEYED_STEP).toBeGreaterThan(0);
    const store = await createSqliteTaskStore({ path, auditKey: KEY });
    const lease = await store.claimTask('w1', { leaseMs: 10_000, taskId: 'task_old' });
    await store.updateTask('task_old', { status: 'cancelled' }, { fencingToken: lease?.fencingToken ?? 0 });
    const fresh = await store.createTask({ kind: 'code', code: 'return 2', language: 'javascript', seed: 1 });
    expect((await store.readAudit('task_old')).map((a) => a.seq)).toEqual([1, 2, 3]);
    await store.close();
    const report = await verifyDatabaseAudit({ path, key: KEY });
    expect(report).toEqual({ keyed: true, legacyRows: 1, keyedRows: 3, findings: [] });
    // Reopened with the key: nothing is re-keyed, the report is the same.
    await (await createSqliteTaskStore({ path, auditKey: KEY })).close();
    expect(await verifyDatabaseAudit({ path, key: KEY })).toEqual(report);
    expect(fresh.id).toMatch(/^task_/);
  });

  it("a legacy task's fields are vouched for by its head from the keying on", async () => {
    await (await createSqliteTaskStore({ path, auditKey: KEY })).close();
    const t = openForTampering(path);
    t.prepare("UPDATE tasks SET tenant = 'mallory' WHERE id = 'task_old'").run();
    t.close();
    const report = await verifyDatabaseAudit({ path, key: KEY });
    expect(report.findings).toEqual([
      expect.objectContaining({ kind: 'task_field_modified', taskId: 'task_old', field: 'tenant' }),
    ]);
  });

  it('covered fields changed without a status change (a new pause reason) keep verifying', async () => {
    const store = await createSqliteTaskStore({ path, auditKey: KEY });
    const task = await store.createTask({ kind: 'code', code: 'return 2', language: 'javascript', seed: 1 });
    const lease = await store.claimTask('w1', { leaseMs: 10_000, taskId: task.id });
    const paused = await store.updateTask(
      task.id,
      { status: 'paused', pauseReason: 'approval_required' },
      { fencingToken: lease?.fencingToken ?? 0 },
    );
    await store.updateTask(task.id, { pauseReason: 'awaiting_input' }, { expectedVersion: paused.version });
    await store.close();
    expect((await verifyDatabaseAudit({ path, key: KEY })).findings).toEqual([]);
  });

  it('a database opened without a key stays unkeyed (not_keyed once a key is asked for)', async () => {
    await (await createSqliteTaskStore({ path, auditKey: null })).close();
    const report = await verifyDatabaseAudit({ path, key: KEY });
    expect(report.keyed).toBe(false);
    expect(report.findings.map((f) => f.kind)).toEqual(['not_keyed']);
  });
});
