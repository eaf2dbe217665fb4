import type Database from 'better-sqlite3';
import type { PauseReason, TaskChanges, TaskStatus } from '../../spec/index.ts';
import { prepared } from './statement-cache.ts';

const DEFAULT_LIMIT = 1000;
const MAX_LIMIT = 1000;

interface ChangeRow {
  readonly id: string;
  readonly tenant: string;
  readonly status: TaskStatus;
  readonly pause_reason: PauseReason | null;
  readonly updated_at: number;
  readonly journal_entries: number;
  readonly change_seq: number;
}

/** The tasks changed after `after` (a change_seq), oldest change first, by the tasks_by_change index. */
export function readChangeRows(db: Database.Database, after: number | null, limit?: number): TaskChanges {
  if (after === null) {
    const row = prepared(db, 'SELECT coalesce(max(change_seq), 0) AS n FROM tasks').get() as { n: number };
    return { changes: [], cursor: row.n };
  }
  const n = Math.min(Math.max(1, limit ?? DEFAULT_LIMIT), MAX_LIMIT);
  const rows = prepared(
    db,
    `SELECT id, tenant, status, pause_reason, updated_at, journal_entries, change_seq FROM tasks
     WHERE change_seq > ? ORDER BY change_seq LIMIT ?`,
  ).all(after, n) as ChangeRow[];
  return {
    changes: rows.map((r) => ({
      taskId: r.id,
      tenant: r.tenant,
      status: r.status,
      pauseReason: r.pause_reason,
      updatedAt: new Date(r.updated_at).toISOString(),
      journalEntries: r.journal_entries,
    })),
    cursor: rows.at(-1)?.change_seq ?? after,
  };
}
