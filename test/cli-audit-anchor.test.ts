import { readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSqliteTaskStore, journalChecksum, verifyStore } from '../src/store/index.ts';
import { cliTestDir, codecall, lastJson } from './cli-fixture.ts';
import { tamperedCopy } from './store/tamper.ts';

// `codecall audit anchor` + `audit verify --anchor`: each kind of tampering that the unkeyed chains let through
// (issue 17, item 9) is shown to pass `verifyStore`, then to be named by the keyed anchor through the real CLI.

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
}

describe('codecall audit anchor / verify --anchor', () => {
  let dir: string;
  let pristine: string;
  let anchor: string;
  let ok: string;
  let other: string;
  let failed: string;
  beforeAll(async () => {
    dir = await cliTestDir('cli-audit-anchor');
    pristine = join(dir, 'tasks.db');
    await writeFile(join(dir, 'tools.js'), TOOLS);
    await writeFile(
      join(dir, 'ticks.js'),
      'const out = []; for (let i = 0; i < 3; i++) out.push(await tools.tick({ i })); return out;\n',
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
    const a = await codecall({}, 'audit', 'anchor', '--db', pristine, '--out', join(dir, 'anchor.json'));
    expect(a.code, a.stderr).toBe(0);
    // `exec` made the key beside the database (its audit rows are keyed, ADR 0030); the anchor uses it.
    expect(a.stderr).not.toContain('created audit key');
    await stat(`${pristine}.audit-key`);
    anchor = join(dir, 'anchor.json');
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  const tampered = (edit: (db: Database.Database) => void): Promise<string> =>
    tamperedCopy(pristine, dir, edit);

  async function unkeyedBroken(path: string): Promise<number> {
    const store = await createSqliteTaskStore({ path });
    try {
      return (await verifyStore(store)).broken.length;
    } finally {
      await store.close();
    }
  }

  async function anchored(path: string, ...extra: string[]): Promise<Finding[]> {
    const r = await codecall({}, 'audit', 'verify', '--db', path, '--anchor', anchor, '--json', ...extra);
    expect(r.code, r.stderr).toBe(1);
    const found = (lastJson(r.stdout).broken as (Finding & { detail: string })[]).filter(
      (b) => b.source === 'anchor',
    );
    // One kind for every anchor finding; what differed is its detail (ADR 0025's kinds).
    for (const f of found) expect(f.kind).toBe('anchor_mismatch');
    return found.map((f) => ({ ...f, kind: f.detail }));
  }

  /** Rewrites a task's journal from `fromSeq` with fresh unkeyed checksums, as an attacker without the key can. */
  function rechain(t: Database.Database, taskId: string, table: 'journal' | 'audit_log'): void {
    const rows = t
      .prepare(`SELECT seq, type, data FROM ${table} WHERE task_id = ? ORDER BY seq`)
      .all(taskId) as {
      seq: number;
      type: string;
      data: string;
    }[];
    let prev = '';
    const set = t.prepare(`UPDATE ${table} SET checksum = ? WHERE task_id = ? AND seq = ?`);
    for (const r of rows) {
      prev = journalChecksum(prev, r.seq, r.type, JSON.parse(r.data));
      set.run(prev, taskId, r.seq);
    }
  }

  it('an untouched database verifies against its anchor, exit 0; the key file is 0600', async () => {
    const r = await codecall({}, 'audit', 'verify', '--db', pristine, '--anchor', anchor, '--json');
    expect(r.code, r.stdout).toBe(0);
    expect(lastJson(r.stdout)).toMatchObject({ ok: true, keyed: true, broken: [] });
    expect((await stat(`${pristine}.audit-key`)).mode & 0o777).toBe(0o600);
    const plain = await codecall({}, 'audit', 'verify', '--db', pristine);
    // The key beside the database is found without flags: the keyed chain was checked, nothing to note.
    expect(plain.code, plain.stdout).toBe(0);
    expect(plain.stdout).not.toContain('note:');
  });

  it('an edited journal timestamp', async () => {
    const path = await tampered((t) =>
      t.prepare('UPDATE journal SET created_at = created_at + 1 WHERE task_id = ? AND seq = 2').run(ok),
    );
    expect(await unkeyedBroken(path)).toBe(0);
    expect(await anchored(path)).toEqual([
      expect.objectContaining({ task_id: ok, log: 'journal', seq: 2, kind: 'edited-row' }),
    ]);
  });

  it('an edited audit timestamp', async () => {
    const path = await tampered((t) =>
      t.prepare('UPDATE audit_log SET created_at = 0 WHERE task_id = ? AND seq = 1').run(ok),
    );
    expect(await unkeyedBroken(path)).toBe(0);
    expect(await anchored(path)).toEqual([
      expect.objectContaining({ task_id: ok, log: 'audit', seq: 1, kind: 'edited-row' }),
    ]);
  });

  it('an edited task tenant and created_at', async () => {
    const path = await tampered((t) =>
      t.prepare("UPDATE tasks SET tenant = 'mallory', created_at = 1 WHERE id = ?").run(ok),
    );
    expect(await unkeyedBroken(path)).toBe(0);
    const found = await anchored(path);
    expect(found.map((f) => f.kind).sort()).toEqual(['edited-field:created_at', 'edited-field:tenant']);
  });

  it('an edited task error', async () => {
    const path = await tampered((t) =>
      t.prepare("UPDATE tasks SET error = json_set(error, '$.message', 'fine') WHERE id = ?").run(failed),
    );
    expect(await unkeyedBroken(path)).toBe(0);
    expect(await anchored(path)).toEqual([
      expect.objectContaining({ task_id: failed, log: 'task', kind: 'edited-field:error' }),
    ]);
  });

  it('an edited journal payload with the chain recomputed (unkeyed algorithm)', async () => {
    const path = await tampered((t) => {
      t.prepare(
        "UPDATE journal SET data = json_set(data, '$.tampered', 1) WHERE task_id = ? AND seq = 3",
      ).run(ok);
      rechain(t, ok, 'journal');
    });
    expect(await unkeyedBroken(path)).toBe(0);
    const found = await anchored(path);
    expect(found).toEqual([
      expect.objectContaining({ task_id: ok, log: 'journal', seq: 3, kind: 'edited-row' }),
    ]);
  });

  it('a whole audit log rewritten and rechained', async () => {
    const path = await tampered((t) => {
      t.prepare("UPDATE audit_log SET data = json_set(data, '$.actor', 'mallory') WHERE task_id = ?").run(
        other,
      );
      rechain(t, other, 'audit_log');
    });
    expect(await unkeyedBroken(path)).toBe(0);
    expect(await anchored(path)).toEqual([
      expect.objectContaining({ task_id: other, log: 'audit', seq: 1, kind: 'edited-row' }),
    ]);
  });

  it('the last audit row deleted', async () => {
    const path = await tampered((t) =>
      t
        .prepare(
          'DELETE FROM audit_log WHERE task_id = ? AND seq = (SELECT max(seq) FROM audit_log WHERE task_id = ?)',
        )
        .run(ok, ok),
    );
    expect(await unkeyedBroken(path)).toBe(0);
    expect(await anchored(path)).toEqual([
      expect.objectContaining({ task_id: ok, log: 'audit', seq: 3, kind: 'missing-rows' }),
    ]);
  });

  it('the last journal row deleted', async () => {
    const path = await tampered((t) =>
      t
        .prepare(
          'DELETE FROM journal WHERE task_id = ? AND seq = (SELECT max(seq) FROM journal WHERE task_id = ?)',
        )
        .run(ok, ok),
    );
    const found = await anchored(path);
    expect(found).toEqual([expect.objectContaining({ task_id: ok, log: 'journal', kind: 'missing-rows' })]);
  });

  it('audit rows swapped between tasks', async () => {
    const path = await tampered((t) => {
      // No foreign key to a task named 'swap'; the attacker's connection needs none.
      t.pragma('foreign_keys = OFF');
      t.prepare("UPDATE audit_log SET task_id = 'swap' WHERE task_id = ?").run(ok);
      t.prepare('UPDATE audit_log SET task_id = ? WHERE task_id = ?').run(ok, other);
      t.prepare("UPDATE audit_log SET task_id = ? WHERE task_id = 'swap'").run(other);
    });
    expect(await unkeyedBroken(path)).toBe(0);
    const found = await anchored(path);
    expect(found.map((f) => [f.task_id, f.log, f.seq, f.kind])).toEqual([
      [ok, 'audit', 1, 'edited-row'],
      [other, 'audit', 1, 'edited-row'],
    ]);
  });

  it('a wrong key', async () => {
    const path = await tampered(() => undefined);
    const found = await anchored(path, '--key', 'not-the-key');
    expect(found).toEqual([expect.objectContaining({ log: 'anchor', kind: 'bad-key' })]);
    // The anchor file itself edited (a task dropped from it) is the same finding under the right key.
    const edited = JSON.parse(await readFile(anchor, 'utf8')) as { tasks: Record<string, unknown> };
    delete edited.tasks[ok];
    const forged = join(dir, 'forged.json');
    await writeFile(forged, JSON.stringify(edited));
    const r = await codecall({}, 'audit', 'verify', '--db', path, '--anchor', forged, '--json');
    expect(r.code).toBe(1);
    expect(lastJson(r.stdout).broken).toEqual([
      expect.objectContaining({ kind: 'anchor_mismatch', detail: 'bad-key' }),
    ]);
  });
});
