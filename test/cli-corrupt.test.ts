import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSqliteTaskStore } from '../src/store/index.ts';
import { assertBuilt, cliTestDir, codecall, lastJson } from './cli-fixture.ts';
import { openForTampering } from './store/tamper.ts';

// `codecall tasks` over a database with one corrupt task (its row garbled, or its journal's chain broken): the
// list shows the others and names the corrupt ones, the corrupt task's view says it is corrupt, and `audit verify`
// reports a garbled row as a broken link. Real SQLite file, the built CLI as a child process.

describe('codecall tasks over a database with corrupt tasks', () => {
  let dir: string;
  let db: string;
  let healthy: string;
  let badRow: string;
  let badJournal: string;
  beforeAll(async () => {
    assertBuilt();
    dir = await cliTestDir('cli-corrupt');
    db = join(dir, 'tasks.db');
    const store = await createSqliteTaskStore({ path: db });
    try {
      const create = async (): Promise<string> =>
        (await store.createTask({ kind: 'code', code: 'return 1', language: 'javascript', seed: 1 })).id;
      healthy = await create();
      badRow = await create();
      badJournal = await create();
    } finally {
      await store.close();
    }
    const raw = openForTampering(db);
    try {
      raw.prepare('UPDATE tasks SET input = \'{"kind":"co\' WHERE id = ?').run(badRow);
      // A paused task's view reads its journal: its first entry no longer matches its checksum.
      raw
        .prepare("UPDATE tasks SET status = 'paused', pause_reason = 'approval_required' WHERE id = ?")
        .run(badJournal);
      raw.prepare(`UPDATE journal SET data = '{"x":1,' || substr(data, 2) WHERE task_id = ?`).run(badJournal);
    } finally {
      raw.close();
    }
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('lists the healthy tasks and names the corrupt ones', async () => {
    const json = await codecall({}, 'tasks', 'list', '--db', db, '--json');
    expect(json.code, json.stderr).toBe(0);
    const out = lastJson(json.stdout) as { tasks: { task_id: string }[]; corrupt: { task_id: string }[] };
    expect(out.tasks.map((t) => t.task_id)).toEqual([healthy]);
    expect(out.corrupt).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ task_id: badRow, code: 'CHECKPOINT_CORRUPT', status: 'pending' }),
        expect.objectContaining({ task_id: badJournal, code: 'CHECKPOINT_CORRUPT', status: 'paused' }),
      ]),
    );
    const text = await codecall({}, 'tasks', 'list', '--db', db);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain(healthy);
    expect(text.stdout).not.toContain(badRow);
    expect(text.stderr).toMatch(
      new RegExp(`${badRow}\\s+pending\\s+corrupt \\(CHECKPOINT_CORRUPT\\): .*input`),
    );
    expect(text.stderr).toContain(`${badJournal}  paused  corrupt (CHECKPOINT_CORRUPT)`);
  });

  it.each([
    ['row', () => badRow],
    ['journal', () => badJournal],
  ])('shows the task with a corrupt %s as corrupt', async (_what, id) => {
    const json = await codecall({}, 'tasks', 'show', id(), '--db', db, '--json');
    expect(json.code, json.stderr).toBe(0);
    expect(lastJson(json.stdout)).toMatchObject({ task_id: id(), corrupt: { code: 'CHECKPOINT_CORRUPT' } });
    const text = await codecall({}, 'tasks', 'show', id(), '--db', db);
    expect(text.stdout).toMatch(/^corrupt: {5}CHECKPOINT_CORRUPT: /m);
  });

  it('audit verify reports the garbled row as a broken link of its task', async () => {
    const r = await codecall({}, 'audit', 'verify', '--db', db, '--json');
    expect(r.code).toBe(1);
    const out = lastJson(r.stdout) as { tasks: number; broken: { task_id: string; log: string }[] };
    expect(out.tasks).toBe(3);
    expect(out.broken).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ task_id: badRow, log: 'task' }),
        expect.objectContaining({ task_id: badJournal, log: 'journal' }),
      ]),
    );
  });
});
