import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { createSqliteTaskStore } from '../../src/store/index.ts';
import { migrate, MIGRATIONS } from '../../src/store/sqlite/migrations.ts';
import { LISTED_HEAD_CHARS, MAX_LISTED_FIELD_CHARS } from '../../src/spec/index.ts';

// A list reads a big input's digests, written with the task, and never the input itself (ADR 0036).

const sha = (text: string): string => createHash('sha256').update(text).digest('hex');
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function openStore() {
  const dir = mkdtempSync(join(tmpdir(), 'codecall-listed-'));
  dirs.push(dir);
  const path = join(dir, 'tasks.db');
  return { path, store: await createSqliteTaskStore({ path, auditKey: null }) };
}

describe('a summarised list', () => {
  it('gives a big program, instruction and metadata as their digests and heads; small ones whole', async () => {
    const { store } = await openStore();
    const code = `// big\n${'x'.repeat(MAX_LISTED_FIELD_CHARS * 3)}`;
    const metadata = { note: 'n'.repeat(MAX_LISTED_FIELD_CHARS + 1) };
    const big = await store.createTask({ kind: 'code', language: 'javascript', seed: 1, code, metadata });
    const instruction = `do ${'y'.repeat(MAX_LISTED_FIELD_CHARS)}`;
    const agent = await store.createTask({
      kind: 'instruction',
      seed: 1,
      language: 'javascript',
      instruction,
      mode: 'code',
      maxSteps: 3,
      maxStepRetries: 1,
    });
    const small = await store.createTask({
      kind: 'code',
      language: 'javascript',
      seed: 1,
      code: 'return 1;',
    });

    const page = await store.listTasks({ summarised: true });
    const byId = new Map(page.tasks.map((t) => [t.id, t]));
    const b = byId.get(big.id);
    expect(b?.listedInput).toEqual({
      code: { bytes: Buffer.byteLength(code), sha256: sha(code), head: code.slice(0, LISTED_HEAD_CHARS) },
      metadata: { bytes: JSON.stringify(metadata).length, sha256: sha(JSON.stringify(metadata)) },
    });
    expect(b?.input).toMatchObject({
      kind: 'code',
      language: 'javascript',
      code: code.slice(0, LISTED_HEAD_CHARS),
    });
    expect(b?.input.metadata).toBeUndefined();
    const a = byId.get(agent.id);
    expect(a?.listedInput?.instruction).toEqual({
      bytes: instruction.length,
      sha256: sha(instruction),
      head: instruction.slice(0, LISTED_HEAD_CHARS),
    });
    expect(a?.input).toMatchObject({ kind: 'instruction', mode: 'code', maxSteps: 3 });
    const s = byId.get(small.id);
    expect(s?.listedInput).toBeUndefined();
    expect(s?.input).toEqual(small.input);

    // The record for running is always whole.
    expect((await store.getTask(big.id))?.input).toEqual(big.input);
    const whole = await store.listTasks({});
    expect(whole.tasks.find((t) => t.id === big.id)?.input).toEqual(big.input);
    expect(whole.tasks.every((t) => t.listedInput === undefined)).toBe(true);
    await store.close();
  });

  it('flags a task whose list form was garbled as corrupt, and lists the rest', async () => {
    const { path, store } = await openStore();
    const big = await store.createTask({
      kind: 'code',
      language: 'javascript',
      seed: 1,
      code: 'z'.repeat(10_000),
    });
    const ok = await store.createTask({ kind: 'code', language: 'javascript', seed: 1, code: 'return 1;' });
    const db = new Database(path);
    db.prepare("UPDATE tasks SET listed_input = '{not json' WHERE id = ?").run(big.id);
    db.close();
    const page = await store.listTasks({ summarised: true });
    expect(page.tasks.map((t) => t.id)).toEqual([ok.id]);
    expect(page.corrupt).toMatchObject([{ taskId: big.id }]);
    expect(page.corrupt[0]?.message).toMatch(/listed_input is not JSON/);
    await store.close();
  });
});

describe('migration 15', () => {
  it('keeps every task, moves the input to the row end, and lists tasks written before by their input', () => {
    const db = new Database(':memory:');
    migrate(db, MIGRATIONS.slice(0, 14));
    const input = JSON.stringify({ kind: 'code', language: 'javascript', seed: 1, code: 'q'.repeat(10_000) });
    db.prepare(
      `INSERT INTO tasks (id, status, input, created_at, updated_at, result) VALUES ('t1', 'succeeded', ?, 1, 2, '"r"')`,
    ).run(input);
    expect(migrate(db)).toBe(MIGRATIONS.length - 14);
    const cols = (db.prepare('PRAGMA table_info(tasks)').all() as { name: string; notnull: number }[]).map(
      (c) => c.name,
    );
    expect(cols.at(-1)).toBe('input');
    expect(cols.at(-2)).toBe('listed_input');
    expect(db.prepare('SELECT id, status, input, listed_input, result FROM tasks').all()).toEqual([
      { id: 't1', status: 'succeeded', input, listed_input: null, result: '"r"' },
    ]);
    expect(db.pragma('foreign_key_check')).toEqual([]);
    db.close();
  });
});
