import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSqliteTaskStore, journalChecksum } from '../src/store/index.ts';
import { cliTestDir, codecall, lastJson } from './cli-fixture.ts';
import { tamperedCopy } from './store/tamper.ts';

// The keyed audit chain (ADR 0030, issue 17 item 9): each kind of tampering, done through a separate
// better-sqlite3 connection on a real database file, is named by `codecall audit verify` (no anchor needed: the
// key beside the database is found the way `serve` finds it).

const TOOLS = `
import { defineTool } from 'codecall';
export default [defineTool({ name: 'tick', description: 'echoes i', effect: 'read', execute: (a) => a.i })];
`;

interface Finding {
  source: string;
  task_id: string;
  log: string;
  seq: number;
  kind: string;
  field?: string;
}

describe('codecall audit verify: the keyed audit chain', () => {
  let dir: string;
  let pristine: string;
  let ok: string;
  let other: string;
  let failed: string;
  beforeAll(async () => {
    dir = await cliTestDir('cli-audit-keyed');
    pristine = join(dir, 'tasks.db');
    await writeFile(join(dir, 'tools.js'), TOOLS);
    await writeFile(
      join(dir, 'ticks.js'),
      'return [await tools.tick({ i: 1 }), await tools.tick({ i: 2 })];\n',
    );
    await writeFile(join(dir, 'fails.js'), 'await tools.tick({ i: 1 }); throw new Error("boom");\n');
    const ids: string[] = [];
    for (const file of ['ticks.js', 'ticks.js', 'fails.js']) {
      const r = await codecall(
        {},
        ...['exec', join(dir, file), '--db', pristine, '--tools', join(dir, 'tools.js'), '--json'],
      );
      ids.push(String(lastJson(r.stdout).task_id));
    }
    [ok, other, failed] = ids as [string, string, string];
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  const tampered = (edit: (db: Database.Database) => void): Promise<string> =>
    tamperedCopy(pristine, dir, edit);

  async function verify(path: string): Promise<{ code: number; out: Record<string, unknown> }> {
    const r = await codecall({}, 'audit', 'verify', '--db', path, '--json');
    return { code: r.code, out: lastJson(r.stdout) };
  }

  /** The keyed findings (the unkeyed chains' own, `source: chain`, are checked by cli-audit.test.ts). */
  async function keyed(path: string): Promise<Finding[]> {
    const { code, out } = await verify(path);
    expect(code, JSON.stringify(out)).toBe(1);
    expect(out.ok).toBe(false);
    return (out.broken as Finding[]).filter((f) => f.source === 'keyed');
  }

  const pick = (f: Finding[]): unknown[] => f.map((x) => [x.task_id, x.seq, x.kind, x.field]);

  it('an untouched database verifies clean, keyed, also after it was reopened and written again', async () => {
    const first = await verify(pristine);
    expect(first.code, JSON.stringify(first.out)).toBe(0);
    expect(first.out).toMatchObject({ ok: true, keyed: true, legacy_audit_entries: 0, broken: [] });
    // created, pending -> running, running -> succeeded|failed: every row keyed.
    expect(first.out.keyed_audit_entries).toBe(9);
    const path = await tampered(() => undefined);
    const store = await createSqliteTaskStore({ path });
    const task = await store.createTask({ kind: 'code', code: 'return 1', language: 'javascript', seed: 1 });
    await store.close();
    const reopened = await createSqliteTaskStore({ path });
    const lease = await reopened.claimTask('w1', { leaseMs: 10_000, taskId: task.id });
    expect(lease).not.toBeNull();
    await reopened.updateTask(task.id, { status: 'cancelled' }, { fencingToken: lease?.fencingToken ?? 0 });
    await reopened.close();
    const again = await verify(path);
    expect(again.code, JSON.stringify(again.out)).toBe(0);
    expect(again.out.keyed_audit_entries).toBe(12);
  });

  it('an edited audit timestamp: row_modified', async () => {
    const path = await tampered((t) =>
      t.prepare('UPDATE audit_log SET created_at = created_at + 1 WHERE task_id = ? AND seq = 2').run(ok),
    );
    expect(pick(await keyed(path))).toEqual([[ok, 2, 'row_modified', undefined]]);
  });

  it("an edited task timestamp: task_field_modified names created_at, a finished task's updated_at", async () => {
    const path = await tampered((t) => {
      t.prepare('UPDATE tasks SET created_at = created_at - 1000 WHERE id = ?').run(ok);
      t.prepare('UPDATE tasks SET updated_at = updated_at + 1000 WHERE id = ?').run(other);
    });
    expect(pick(await keyed(path))).toEqual([
      [ok, 3, 'task_field_modified', 'created_at'],
      [other, 3, 'task_field_modified', 'updated_at'],
    ]);
  });

  it('an edited tenant: task_field_modified', async () => {
    const path = await tampered((t) => t.prepare("UPDATE tasks SET tenant = 'mallory' WHERE id = ?").run(ok));
    expect(pick(await keyed(path))).toEqual([[ok, 3, 'task_field_modified', 'tenant']]);
  });

  it('an edited error: task_field_modified', async () => {
    const path = await tampered((t) =>
      t.prepare("UPDATE tasks SET error = json_set(error, '$.message', 'fine') WHERE id = ?").run(failed),
    );
    expect(pick(await keyed(path))).toEqual([[failed, 3, 'task_field_modified', 'error']]);
  });

  it('an edited status (and result): task_field_modified', async () => {
    const path = await tampered((t) => {
      t.prepare("UPDATE tasks SET status = 'failed' WHERE id = ?").run(ok);
      t.prepare("UPDATE tasks SET result = '[1,3]' WHERE id = ?").run(other);
    });
    expect(pick(await keyed(path))).toEqual([
      [ok, 3, 'task_field_modified', 'status'],
      [other, 3, 'task_field_modified', 'result'],
    ]);
  });

  it('the last audit row deleted: truncated (the signed head says seq 3)', async () => {
    const path = await tampered((t) =>
      t.prepare('DELETE FROM audit_log WHERE task_id = ? AND seq = 3').run(ok),
    );
    const found = await keyed(path);
    expect(pick(found.filter((f) => f.kind !== 'task_field_modified'))).toEqual([
      [ok, 3, 'truncated', undefined],
    ]);
  });

  it('a middle audit row deleted: row_deleted', async () => {
    const path = await tampered((t) =>
      t.prepare('DELETE FROM audit_log WHERE task_id = ? AND seq = 2').run(ok),
    );
    expect(pick(await keyed(path))).toEqual([[ok, 2, 'row_deleted', undefined]]);
  });

  it('a whole audit log rewritten and its sha256 chain recomputed: chain_recomputed_without_key', async () => {
    const path = await tampered((t) => {
      t.prepare("UPDATE audit_log SET data = json_set(data, '$.actor', 'mallory') WHERE task_id = ?").run(
        other,
      );
      const rows = t
        .prepare('SELECT seq, type, data FROM audit_log WHERE task_id = ? ORDER BY seq')
        .all(other) as { seq: number; type: string; data: string }[];
      let prev = '';
      for (const r of rows) {
        prev = journalChecksum(prev, r.seq, r.type, JSON.parse(r.data));
        t.prepare('UPDATE audit_log SET checksum = ? WHERE task_id = ? AND seq = ?').run(prev, other, r.seq);
      }
    });
    const { out } = await verify(path);
    // The unkeyed chain is intact: only the key shows the rewrite.
    expect((out.broken as Finding[]).filter((f) => f.source === 'chain')).toEqual([]);
    expect(pick(await keyed(path))).toEqual([
      [other, 1, 'chain_recomputed_without_key', undefined],
      [other, 2, 'chain_recomputed_without_key', undefined],
      [other, 3, 'chain_recomputed_without_key', undefined],
    ]);
  });

  /** Rewrites the journal's unkeyed sha256 chain of `task` so that it verifies again. */
  function rechainJournal(t: Database.Database, task: string): void {
    const rows = t
      .prepare('SELECT seq, type, data FROM journal WHERE task_id = ? ORDER BY seq')
      .all(task) as { seq: number; type: string; data: string }[];
    let prev = '';
    for (const r of rows) {
      prev = journalChecksum(prev, r.seq, r.type, JSON.parse(r.data));
      t.prepare('UPDATE journal SET checksum = ? WHERE task_id = ? AND seq = ?').run(prev, task, r.seq);
    }
  }

  it('a journal payload rewritten with its sha256 chain recomputed: journal_modified', async () => {
    // A tool's recorded result and a call's arguments: the unkeyed chain verifies, the keyed pin does not.
    const path = await tampered((t) => {
      t.prepare(
        "UPDATE journal SET data = json_set(data, '$.payload', '99') WHERE task_id = ? AND type = 'tool_outcome'",
      ).run(ok);
      rechainJournal(t, ok);
      t.prepare(
        "UPDATE journal SET data = json_set(data, '$.args', '{\"i\":7}') WHERE task_id = ? AND type = 'tool_intent'",
      ).run(other);
      rechainJournal(t, other);
    });
    const { out } = await verify(path);
    expect((out.broken as Finding[]).filter((f) => f.source === 'chain')).toEqual([]);
    expect(pick(await keyed(path))).toEqual([
      [ok, 3, 'journal_modified', undefined],
      [other, 3, 'journal_modified', undefined],
    ]);
  });

  it("a journal entry's time edited, or an entry deleted: journal_modified", async () => {
    const path = await tampered((t) => {
      t.prepare('UPDATE journal SET created_at = created_at - 60000 WHERE task_id = ? AND seq = 2').run(ok);
      t.prepare(
        'DELETE FROM journal WHERE task_id = ? AND seq = (SELECT max(seq) FROM journal WHERE task_id = ?)',
      ).run(other, other);
    });
    expect(pick(await keyed(path))).toEqual([
      [ok, 3, 'journal_modified', undefined],
      [other, 3, 'journal_modified', undefined],
    ]);
  });

  it("what the submitter asked for and a finished task's logs: task_field_modified names each", async () => {
    const path = await tampered((t) => {
      t.prepare("UPDATE tasks SET priority = 100, callback_url = 'https://evil.example/' WHERE id = ?").run(
        ok,
      );
      t.prepare('UPDATE tasks SET deadline_at = 1, max_retries = 10 WHERE id = ?').run(other);
      t.prepare("UPDATE tasks SET execution_log = ?, resources = '{}' WHERE id = ?").run(
        '[{"level":"log","message":"forged"}]',
        failed,
      );
    });
    const found = pick(await keyed(path));
    expect(found).toEqual(
      expect.arrayContaining([
        [ok, 3, 'task_field_modified', 'priority'],
        [ok, 3, 'task_field_modified', 'callback_url'],
        [other, 3, 'task_field_modified', 'deadline_at'],
        [other, 3, 'task_field_modified', 'max_retries'],
        [failed, 3, 'task_field_modified', 'execution_log'],
        [failed, 3, 'task_field_modified', 'resources'],
      ]),
    );
    expect(found).toHaveLength(6);
  });

  it('a deleted or edited signed head: head_missing, head_modified', async () => {
    const path = await tampered((t) => {
      t.prepare('DELETE FROM audit_heads WHERE task_id = ?').run(ok);
      t.prepare('UPDATE audit_heads SET seq = 2 WHERE task_id = ?').run(other);
    });
    expect(pick(await keyed(path))).toEqual([
      [ok, 0, 'head_missing', undefined],
      [other, 2, 'head_modified', undefined],
    ]);
  });

  it('a whole task deleted with its rows and head: task_deleted; the signed count edited: count_modified', async () => {
    const path = await tampered((t) => {
      t.pragma('foreign_keys = ON');
      t.prepare('DELETE FROM tasks WHERE id = ?').run(other);
    });
    expect(pick(await keyed(path))).toEqual([['-', 0, 'task_deleted', undefined]]);
    const counted = await tampered((t) => {
      t.pragma('foreign_keys = ON');
      t.prepare('DELETE FROM tasks WHERE id = ?').run(other);
      t.prepare('UPDATE audit_key SET tasks = tasks - 1').run();
    });
    expect(pick(await keyed(counted))).toEqual([['-', 0, 'count_modified', undefined]]);
  });

  it('the keying stripped (key fingerprint, heads and MACs removed): not_keyed', async () => {
    const path = await tampered((t) =>
      t.exec(
        'DELETE FROM audit_key; DELETE FROM audit_heads; UPDATE audit_log SET mac = NULL, data_mac = NULL, covers = NULL;',
      ),
    );
    expect(pick(await keyed(path))).toEqual([['-', 0, 'not_keyed', undefined]]);
  });

  it('the key file replaced: key_mismatch, and a writer refuses to open with it (AUDIT_KEY_MISMATCH)', async () => {
    const path = await tampered(() => undefined);
    await writeFile(`${path}.audit-key`, 'f'.repeat(64));
    expect(pick(await keyed(path))).toEqual([['-', 0, 'key_mismatch', undefined]]);
    const list = await codecall({}, 'tasks', 'list', '--db', path);
    expect(list.code).not.toBe(0);
    expect(list.stderr).toContain('AUDIT_KEY_MISMATCH');
    await expect(createSqliteTaskStore({ path })).rejects.toMatchObject({ code: 'AUDIT_KEY_MISMATCH' });
  });

  it('text output names each finding', async () => {
    const path = await tampered((t) =>
      t.prepare('DELETE FROM audit_log WHERE task_id = ? AND seq = 3').run(ok),
    );
    const r = await codecall({}, 'audit', 'verify', '--db', path);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`BROKEN ${ok}  audit  seq 3  truncated: `);
  });
});
