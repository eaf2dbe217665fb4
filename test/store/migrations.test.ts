import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { CodecallError } from '../../src/errors/index.ts';
import { migrate, MIGRATIONS, SCHEMA_VERSION } from '../../src/store/sqlite/migrations.ts';

const tables = (db: Database.Database): string[] =>
  (
    db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as {
      name: string;
    }[]
  ).map((r) => r.name);

describe('SQLite migrations', () => {
  it('applies every step once, then nothing', () => {
    const db = new Database(':memory:');
    expect(migrate(db)).toBe(SCHEMA_VERSION);
    expect(migrate(db)).toBe(0);
    expect(tables(db)).toEqual([
      'api_keys',
      'artifacts',
      'audit_heads',
      'audit_key',
      'audit_log',
      'batches',
      'bodies',
      'body_chunks',
      'idempotency_keys',
      'journal',
      'journal_summaries',
      'schema_version',
      'store_probe',
      'task_revisions',
      'tasks',
      'tenant_turns',
      'tool_quota_counts',
      'tool_rate_buckets',
      'webhook_outbox',
    ]);
    db.close();
  });

  it('applies only the steps a database lacks', () => {
    const db = new Database(':memory:');
    migrate(db, MIGRATIONS);
    expect(migrate(db, [...MIGRATIONS, 'CREATE TABLE extra (x INTEGER)'])).toBe(1);
    expect(db.prepare('SELECT version FROM schema_version').all()).toEqual([{ version: SCHEMA_VERSION + 1 }]);
    db.close();
  });

  it('upgrades a version 1 database with tasks in it, keeping them', () => {
    const db = new Database(':memory:');
    migrate(db, MIGRATIONS.slice(0, 1));
    db.prepare(
      `INSERT INTO tasks (id, status, input, created_at, updated_at) VALUES ('t1', 'paused', '{}', 1, 1)`,
    ).run();
    expect(migrate(db)).toBe(SCHEMA_VERSION - 1);
    expect(
      db.prepare('SELECT id, status, execution_log, requested_action, wake_at FROM tasks').all(),
    ).toEqual([{ id: 't1', status: 'paused', execution_log: null, requested_action: null, wake_at: null }]);
    db.close();
  });

  it('numbers the status changes of existing tasks once, in change order (13), then counts new ones', () => {
    const db = new Database(':memory:');
    migrate(db, MIGRATIONS.slice(0, 12));
    const insert = db.prepare(
      `INSERT INTO tasks (id, status, input, created_at, updated_at) VALUES (?, 'pending', '{}', 1, 1)`,
    );
    for (const id of ['a', 'b', 'c']) insert.run(id);
    db.prepare("UPDATE tasks SET status = 'running' WHERE id = 'a'").run();
    expect(migrate(db)).toBe(MIGRATIONS.length - 12);
    const seqs = (): Record<string, number> =>
      Object.fromEntries(
        (db.prepare('SELECT id, status_seq FROM tasks').all() as { id: string; status_seq: number }[]).map(
          (r) => [r.id, r.status_seq],
        ),
      );
    expect(seqs()).toEqual({ b: 1, c: 2, a: 3 });
    // A journal count is not a status change; a status is.
    db.prepare("UPDATE tasks SET journal_entries = 5 WHERE id = 'b'").run();
    expect(seqs().b).toBe(1);
    db.prepare("UPDATE tasks SET status = 'running' WHERE id = 'b'").run();
    insert.run('d');
    expect(seqs()).toEqual({ a: 3, b: 4, c: 2, d: 5 });
    db.close();
  });

  it('indexes the revisions of tasks written before (16), skipping inputs that name none or are garbled', () => {
    const db = new Database(':memory:');
    migrate(db, MIGRATIONS.slice(0, 15));
    const insert = db.prepare(
      `INSERT INTO tasks (id, status, input, created_at, updated_at, tenant) VALUES (?, 'failed', ?, ?, ?, ?)`,
    );
    const code = (extra: object) =>
      JSON.stringify({ kind: 'code', language: 'javascript', seed: 1, ...extra });
    insert.run('src', code({ code: 'return "revisionOf"' }), 1, 1, 'acme');
    insert.run('r2', code({ code: 'x', revisionOf: 'src' }), 3, 3, 'acme');
    insert.run('r1', code({ code: 'x', revisionOf: 'src', rerunReads: true }), 2, 2, 'acme');
    insert.run('nested', code({ code: 'x', metadata: { revisionOf: 'src' } }), 4, 4, 'acme');
    insert.run('odd', code({ code: 'x', revisionOf: 7 }), 5, 5, 'acme');
    insert.run('garbled', '{"kind":"code","revisionOf":"src"', 6, 6, 'acme');
    expect(migrate(db)).toBe(MIGRATIONS.length - 15);
    expect(db.prepare('SELECT * FROM task_revisions ORDER BY created_at').all()).toEqual([
      { task_id: 'r1', revision_of: 'src', tenant: 'acme', created_at: 2 },
      { task_id: 'r2', revision_of: 'src', tenant: 'acme', created_at: 3 },
    ]);
    // The view's read is a search of the index alone (no task row, no journal).
    const plan = db
      .prepare(
        `EXPLAIN QUERY PLAN SELECT task_id FROM task_revisions WHERE revision_of = ? AND tenant = ?
         ORDER BY created_at DESC, task_id DESC LIMIT 20`,
      )
      .all('src', 'acme') as { detail: string }[];
    expect(plan.map((p) => p.detail).join('; ')).toMatch(/USING COVERING INDEX task_revisions_by_source/);
    expect(plan.map((p) => p.detail).join('; ')).not.toMatch(/TEMP B-TREE/);
    expect(db.pragma('foreign_key_check')).toEqual([]);
    db.close();
  });

  it('moves the journal and artifacts into rowid tables with their big column last (17), keeping every row', () => {
    const db = new Database(':memory:');
    migrate(db, MIGRATIONS.slice(0, 16));
    db.prepare(
      `INSERT INTO tasks (id, status, input, created_at, updated_at, tenant) VALUES ('t', 'paused', '{}', 1, 1, 'a')`,
    ).run();
    const big = 'x'.repeat(300_000);
    const journal = db.prepare(
      'INSERT INTO journal (task_id, seq, type, data, checksum, created_at) VALUES (?, ?, ?, ?, ?, ?)',
    );
    journal.run('t', 1, 'task_input', '{}', 'c1', 1);
    journal.run('t', 2, 'tool_intent', `{"args":"${big}"}`, 'c2', 2);
    journal.run('t', 3, 'control', '{}', 'c3', 3);
    db.prepare(
      `INSERT INTO artifacts (task_id, name, size, sha256, data, created_at) VALUES ('t', 'a.bin', 3, 'h', x'010203', 4)`,
    ).run();
    const before = db.prepare('SELECT * FROM journal ORDER BY seq').all();
    expect(migrate(db)).toBe(MIGRATIONS.length - 16);
    expect(db.prepare('SELECT * FROM journal ORDER BY seq').all()).toEqual(before);
    expect(db.prepare('SELECT name, size, data FROM artifacts').all()).toEqual([
      { name: 'a.bin', size: 3, data: Buffer.from([1, 2, 3]) },
    ]);
    for (const table of ['journal', 'artifacts']) {
      const sql = (db.prepare('SELECT sql FROM sqlite_master WHERE name = ?').get(table) as { sql: string })
        .sql;
      expect(sql, table).not.toMatch(/WITHOUT ROWID/);
      const cols = (db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[]).map((c) => c.name);
      expect(cols.at(-1), table).toBe('data');
    }
    // Still append-only.
    expect(() => db.prepare("UPDATE journal SET type = 'x' WHERE seq = 1").run()).toThrow(/append-only/);
    expect(() => db.prepare('DELETE FROM journal WHERE seq = 1').run()).toThrow(/append-only/);
    expect(db.pragma('foreign_key_check')).toEqual([]);
    db.close();
  });

  it('rolls a failing run back as a whole', () => {
    const db = new Database(':memory:');
    expect(() => migrate(db, [...MIGRATIONS, 'CREATE TABLE broken ('])).toThrow();
    expect(tables(db)).toEqual([]);
    db.close();
  });

  it('refuses a schema newer than it knows with STORE_ERROR', () => {
    const db = new Database(':memory:');
    migrate(db, [...MIGRATIONS, 'CREATE TABLE extra (x INTEGER)']);
    expect(() => migrate(db)).toThrow(CodecallError);
    db.close();
  });
});
