import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isCorruptTask, readSummaryForView, summarizeJournal } from '../../src/internal.ts';
import type { JournalEntryInput, TaskStore } from '../../src/internal.ts';
import { createSqliteTaskStore } from '../../src/store/index.ts';
import { codeInput, LEASE, T0 } from '../conformance/task-store-support.ts';
import { openForTampering } from './tamper.ts';

// The SQLite store's journal summaries (ADR 0035): a database from before them (schema 12) opens at once and each
// task's summary is folded once by its first reader, then kept; a summary edited behind the store's back is not
// used (rebuilt from the verified journal), and one that names rows the journal does not hold makes the task corrupt.

const ENTRIES: readonly JournalEntryInput[] = [
  { type: 'tool_intent', data: { call_id: 'c1', tool: 'pay', args: '{"amount":1}' } },
  { type: 'tool_outcome', data: { call_id: 'c1', ok: true, payload: '1' } },
  { type: 'approval_request', data: { approval_id: 'c2', call_id: 'c2', tool: 'pay', args: '{"amount":2}' } },
];

let dir = '';
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'codecall-summary-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

async function journaled(path: string): Promise<{ store: TaskStore; id: string }> {
  const store = await createSqliteTaskStore({ path });
  const task = await store.createTask(codeInput(), { now: T0 });
  const lease = await store.claimTask('w1', { leaseMs: LEASE, now: T0 });
  await store.appendJournal(task.id, ENTRIES, { fencingToken: lease?.fencingToken ?? -1 });
  return { store, id: task.id };
}

function edit(path: string, sql: string, ...params: unknown[]): void {
  const db = openForTampering(path);
  try {
    db.prepare(sql).run(...params);
  } finally {
    db.close();
  }
}

describe('SQLite journal summaries', () => {
  it('a database from before summaries: its first view folds the journal once and keeps the summary', async () => {
    const path = join(dir, 'legacy.db');
    const { store, id } = await journaled(path);
    await store.close();
    // As migration 14 leaves a database from before summaries: the table there, no task's summary in it.
    const db = openForTampering(path);
    db.exec('DELETE FROM journal_summaries');
    db.close();
    const reopened = await createSqliteTaskStore({ path });
    try {
      expect(await reopened.readJournalSummary(id)).toBeNull();
      const task = await reopened.getTask(id);
      if (!task) throw new Error('no task');
      const view = await readSummaryForView(reopened, task);
      if (isCorruptTask(view)) throw new Error(view.message);
      const fold = summarizeJournal(await reopened.readJournal(id));
      expect(view.summary).toEqual(fold);
      expect(await reopened.readJournalSummary(id)).toEqual(fold);
      // Appends keep it current from then on.
      const lease = await reopened.claimTask('w2', { leaseMs: LEASE, now: T0 + 2 * LEASE });
      await reopened.appendJournal(id, [{ type: 'clock', data: { clock: 5 } }], {
        fencingToken: lease?.fencingToken ?? -1,
      });
      expect(await reopened.readJournalSummary(id)).toEqual(summarizeJournal(await reopened.readJournal(id)));
    } finally {
      await reopened.close();
    }
  });

  it('does not use a summary that is not of the journal head, nor one that does not parse', async () => {
    const path = join(dir, 'edited.db');
    const { store, id } = await journaled(path);
    try {
      const fold = summarizeJournal(await store.readJournal(id));
      edit(path, 'UPDATE journal_summaries SET seq = seq - 1 WHERE task_id = ?', id);
      expect(await store.readJournalSummary(id)).toBeNull();
      edit(
        path,
        `UPDATE journal_summaries SET seq = ?, summary = '{"format":1' WHERE task_id = ?`,
        fold.seq,
        id,
      );
      expect(await store.readJournalSummary(id)).toBeNull();
      const task = await store.getTask(id);
      if (!task) throw new Error('no task');
      const view = await readSummaryForView(store, task);
      expect(isCorruptTask(view) ? view.message : view.summary).toEqual(fold);
      expect(await store.readJournalSummary(id)).toEqual(fold);
    } finally {
      await store.close();
    }
  });

  it('a summary whose approval names another row makes the task corrupt', async () => {
    const path = join(dir, 'lying.db');
    const { store, id } = await journaled(path);
    try {
      edit(
        path,
        `UPDATE journal_summaries SET summary = json_set(summary, '$.approvals[0].seq', 2) WHERE task_id = ?`,
        id,
      );
      const task = await store.getTask(id);
      if (!task) throw new Error('no task');
      const view = await readSummaryForView(store, task);
      expect(isCorruptTask(view) ? view.message : 'not corrupt').toMatch(
        /seq 2: not the request of approval c2/,
      );
    } finally {
      await store.close();
    }
  });
});
