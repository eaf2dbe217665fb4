import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSqliteTaskStore, journalChecksum, verifyDatabaseAudit } from '../../src/store/index.ts';
import type { AuditFinding } from '../../src/store/index.ts';
import { createPostgresTaskStore } from '../../src/store/postgres/create-postgres-task-store.ts';
import { verifyPostgresAudit } from '../../src/store/postgres/pg-verify-audit.ts';
import { freshSchema, postgresSkipReason, postgresUrl, tamperPostgres } from '../support/postgres-store.ts';
import { IDS, KEY, keyedWorkload, MEMBER, OTHER_KEY, REVOKED } from '../support/keyed-workload.ts';
import { codeInput } from '../conformance/task-store-support.ts';
import { openForTampering } from './tamper.ts';

// The keyed audit chain on PostgreSQL (ADR 0030, 0042): the same workload with the same key on SQLite and on
// PostgreSQL writes the same MACs and heads, and each tamper, done to both (on PostgreSQL as a superuser with
// triggers off), is named with the same findings.

/** SQL run on either database: `?` placeholders, rows as objects. */
interface Tamper {
  all(sql: string, params?: unknown[]): Promise<Record<string, unknown>[]>;
  run(sql: string, params?: unknown[]): Promise<void>;
}

const onSqlite = (db: Database.Database): Tamper => ({
  all: (sql, params = []) => Promise.resolve(db.prepare(sql).all(...params) as Record<string, unknown>[]),
  run: (sql, params = []) => {
    db.prepare(sql).run(...params);
    return Promise.resolve();
  },
});

const numbered = (sql: string): string => {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
};

const TABLES = ['audit_log', 'audit_heads', 'audit_key', 'api_keys'] as const;
const ORDER: Record<(typeof TABLES)[number], string> = {
  audit_log: 'task_id, seq',
  audit_heads: 'task_id',
  audit_key: 'id',
  api_keys: 'id',
};

/** Rewrites a log's sha256 chain so that it verifies again (what an attacker without the key can do). */
async function rechain(t: Tamper, table: 'journal' | 'audit_log', task: string): Promise<void> {
  const rows = await t.all(`SELECT seq, type, data FROM ${table} WHERE task_id = ? ORDER BY seq`, [task]);
  let prev = '';
  for (const r of rows) {
    prev = journalChecksum(prev, Number(r.seq), String(r.type), JSON.parse(String(r.data)));
    await t.run(`UPDATE ${table} SET checksum = ? WHERE task_id = ? AND seq = ?`, [prev, task, r.seq]);
  }
}

const pick = (f: readonly AuditFinding[]): unknown[] => f.map((x) => [x.taskId, x.seq, x.kind, x.field]);

const url = postgresUrl();

if (url === null) {
  describe('the keyed audit chain on PostgreSQL', () => {
    it.skip(postgresSkipReason(), () => undefined);
  });
} else {
  describe('the keyed audit chain on PostgreSQL', () => {
    let dir = '';
    let pristine = '';
    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'codecall-pg-audit-'));
      pristine = join(dir, 'tasks.db');
      const sqlite = await createSqliteTaskStore({ path: pristine, auditKey: KEY });
      await keyedWorkload(sqlite);
      await sqlite.close();
    });
    afterAll(() => rm(dir, { recursive: true, force: true }));

    async function keyedSchema(): Promise<string> {
      const schema = freshSchema('pga');
      const store = await createPostgresTaskStore({ url: url ?? '', schema, auditKey: KEY });
      await keyedWorkload(store);
      await store.close();
      return schema;
    }

    let copies = 0;
    /** The findings of one tamper done to a SQLite copy and to a fresh PostgreSQL schema; both must agree. */
    async function tampered(edit: (t: Tamper) => Promise<void>): Promise<AuditFinding[]> {
      const path = join(dir, `copy-${++copies}.db`);
      await copyFile(pristine, path);
      const db = openForTampering(path);
      try {
        await edit(onSqlite(db));
      } finally {
        db.close();
      }
      const schema = await keyedSchema();
      await tamperPostgres(schema, (c) =>
        edit({
          all: async (sql, params) => (await c.query<Record<string, unknown>>(numbered(sql), params)).rows,
          run: async (sql, params) => {
            await c.query(numbered(sql), params);
          },
        }),
      );
      const onSqliteReport = await verifyDatabaseAudit({ path, key: KEY });
      const onPostgres = await verifyPostgresAudit({ url: url ?? '', schema, key: KEY });
      expect(onPostgres).toEqual(onSqliteReport);
      return [...onPostgres.findings];
    }

    it('writes the same keyed rows, heads and key MACs as SQLite, and verifies clean', async () => {
      const schema = await keyedSchema();
      const report = await verifyPostgresAudit({ url: url ?? '', schema, key: KEY });
      expect(report).toEqual(await verifyDatabaseAudit({ path: pristine, key: KEY }));
      expect(report).toMatchObject({ keyed: true, legacyRows: 0, findings: [] });
      // created, running, the end (or the pause), for each of the four tasks.
      expect(report.keyedRows).toBe(12);
      const db = openForTampering(pristine);
      try {
        await tamperPostgres(schema, async (c) => {
          c.setTypeParser(20, Number);
          for (const table of TABLES) {
            const cols = table === 'audit_key' ? 'fingerprint, tasks, tasks_sig, keys_sig' : '*';
            const pg = (await c.query(`SELECT ${cols} FROM ${table} ORDER BY ${ORDER[table]}`)).rows;
            expect(pg, table).toEqual(
              db.prepare(`SELECT ${cols} FROM ${table} ORDER BY ${ORDER[table]}`).all(),
            );
          }
        });
      } finally {
        db.close();
      }
    });

    it('an edited covered task field: task_field_modified', async () => {
      const found = await tampered((t) =>
        t.run("UPDATE tasks SET tenant = 'mallory' WHERE id = ?", [IDS.ok]),
      );
      expect(pick(found)).toEqual([[IDS.ok, 3, 'task_field_modified', 'tenant']]);
    });

    it('an edited audit row: row_modified; rewritten with its chain recomputed: chain_recomputed_without_key', async () => {
      const edited = await tampered((t) =>
        t.run('UPDATE audit_log SET created_at = created_at + 1 WHERE task_id = ? AND seq = 2', [IDS.ok]),
      );
      expect(pick(edited)).toEqual([[IDS.ok, 2, 'row_modified', undefined]]);
      const rewritten = await tampered(async (t) => {
        await t.run("UPDATE audit_log SET data = replace(data, 'w1', 'mallory') WHERE task_id = ?", [
          IDS.other,
        ]);
        await rechain(t, 'audit_log', IDS.other);
      });
      expect(pick(rewritten)).toEqual([
        [IDS.other, 2, 'chain_recomputed_without_key', undefined],
        [IDS.other, 3, 'chain_recomputed_without_key', undefined],
      ]);
    });

    it('a removed tail row: truncated; a removed head: head_missing', async () => {
      const found = await tampered(async (t) => {
        await t.run('DELETE FROM audit_log WHERE task_id = ? AND seq = 3', [IDS.failed]);
        await t.run('DELETE FROM audit_heads WHERE task_id = ?', [IDS.other]);
      });
      expect(pick(found)).toEqual([
        [IDS.other, 0, 'head_missing', undefined],
        [IDS.failed, 3, 'truncated', undefined],
      ]);
    });

    it('a journal entry rewritten with its chain recomputed: journal_modified', async () => {
      const found = await tampered(async (t) => {
        await t.run(`UPDATE journal SET data = '{"clock":7}' WHERE task_id = ? AND seq = 2`, [IDS.ok]);
        await rechain(t, 'journal', IDS.ok);
      });
      expect(pick(found)).toEqual([[IDS.ok, 3, 'journal_modified', undefined]]);
    });

    it("a replaced artifact and a finished task's result: task_field_modified", async () => {
      const found = await tampered(async (t) => {
        await t.run('UPDATE artifacts SET data = ?, size = 4, sha256 = ? WHERE task_id = ?', [
          Buffer.from('evil'),
          'a'.repeat(64),
          IDS.ok,
        ]);
        await t.run("UPDATE tasks SET result = '[9]' WHERE id = ?", [IDS.other]);
      });
      expect(pick(found)).toEqual([
        [IDS.ok, 3, 'task_field_modified', 'artifacts'],
        [IDS.ok, 3, 'task_field_modified', 'artifacts'],
        [IDS.other, 3, 'task_field_modified', 'result'],
      ]);
    });

    it('a task deleted with its rows: task_deleted; the keying stripped: not_keyed', async () => {
      const deleted = await tampered(async (t) => {
        for (const table of ['journal', 'audit_log', 'audit_heads', 'artifacts'])
          await t.run(`DELETE FROM ${table} WHERE task_id = ?`, [IDS.paused]);
        await t.run('DELETE FROM tasks WHERE id = ?', [IDS.paused]);
      });
      expect(pick(deleted)).toEqual([['-', 0, 'task_deleted', undefined]]);
      const stripped = await tampered((t) =>
        t.run('DELETE FROM audit_key').then(() => t.run('DELETE FROM audit_heads')),
      );
      expect(pick(stripped)).toEqual([['-', 0, 'not_keyed', undefined]]);
    });

    it('a forged API key row: key_modified, and the key authenticates no one', async () => {
      const found = await tampered(async (t) => {
        await t.run("UPDATE api_keys SET role = 'admin' WHERE id = ?", [MEMBER.id]);
        await t.run('UPDATE api_keys SET revoked_at = NULL WHERE id = ?', [REVOKED.id]);
        await t.run(
          "INSERT INTO api_keys (id, key_hash, tenant, role, name, created_at) VALUES ('key_x', ?, 'acme', 'admin', NULL, 1)",
          ['x'.repeat(64)],
        );
      });
      expect(pick(found)).toEqual([
        ['-', 0, 'key_modified', 'key_x'],
        ['-', 0, 'key_modified', MEMBER.id],
        ['-', 0, 'key_modified', REVOKED.id],
      ]);
      const schema = await keyedSchema();
      await tamperPostgres(schema, async (c) => {
        await c.query("UPDATE api_keys SET tenant = 'other' WHERE id = $1", [MEMBER.id]);
      });
      const store = await createPostgresTaskStore({ url: url ?? '', schema, auditKey: KEY });
      try {
        await expect(store.findApiKey(MEMBER.hash)).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
        expect(await store.findApiKey(REVOKED.hash)).toBeNull();
      } finally {
        await store.close();
      }
    });

    it('a wrong key: key_mismatch, and a store refuses to open with it (AUDIT_KEY_MISMATCH)', async () => {
      const schema = await keyedSchema();
      const report = await verifyPostgresAudit({ url: url ?? '', schema, key: OTHER_KEY });
      expect(report).toEqual(await verifyDatabaseAudit({ path: pristine, key: OTHER_KEY }));
      expect(pick(report.findings)).toEqual([['-', 0, 'key_mismatch', undefined]]);
      await expect(
        createPostgresTaskStore({ url: url ?? '', schema, auditKey: OTHER_KEY }),
      ).rejects.toMatchObject({
        code: 'AUDIT_KEY_MISMATCH',
      });
    });
  });

  describe('keying a PostgreSQL schema written unkeyed', () => {
    it('keeps old rows as legacy, keys what comes after and the API keys there, and names an unkeyed writer', async () => {
      const schema = freshSchema('pgl');
      const open = (auditKey: Buffer | null) => createPostgresTaskStore({ url: url ?? '', schema, auditKey });
      const unkeyed = await open(null);
      await unkeyed.createTask(codeInput(), { id: 'task_old' });
      await unkeyed.createApiKey({ id: MEMBER.id, keyHash: MEMBER.hash, tenant: 'acme', role: 'member' });
      await unkeyed.close();
      const keyed = await open(KEY);
      const lease = await keyed.claimTask('w1', { leaseMs: 60_000, taskId: 'task_old' });
      await keyed.updateTask('task_old', { status: 'cancelled' }, { fencingToken: lease?.fencingToken ?? 0 });
      await keyed.createTask(codeInput(), { id: 'task_new' });
      expect(await keyed.findApiKey(MEMBER.hash)).toMatchObject({ id: MEMBER.id });
      await keyed.close();
      const report = await verifyPostgresAudit({ url: url ?? '', schema, key: KEY });
      expect(report).toEqual({ keyed: true, legacyRows: 1, keyedRows: 3, findings: [] });
      // Opened again with the key: nothing is keyed again.
      await (await open(KEY)).close();
      expect(await verifyPostgresAudit({ url: url ?? '', schema, key: KEY })).toEqual(report);
      // A writer without the key on the keyed schema: its rows are named.
      const writer = await open(null);
      const again = await writer.claimTask('w2', { leaseMs: 60_000, taskId: 'task_new' });
      expect(again).not.toBeNull();
      await writer.close();
      const after = await verifyPostgresAudit({ url: url ?? '', schema, key: KEY });
      // Its row is not keyed and not in the head, and the head no longer matches the task's status.
      expect(pick(after.findings)).toEqual([
        ['task_new', 2, 'row_unkeyed', undefined],
        ['task_new', 2, 'row_unkeyed', undefined],
        ['task_new', 1, 'task_field_modified', 'status'],
      ]);
    });
  });
}
