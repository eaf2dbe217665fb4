import type Database from 'better-sqlite3';
import type { PauseReason, StatusChanges, TaskChanges, TaskStatus } from '../../spec/index.ts';
import { statusChangeOf, taskChangeOf } from '../change-rows.ts';
import { SUMMARISED_TASK_COLUMNS } from '../rows.ts';
import type { TaskRow } from '../rows.ts';
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
  readonly status_seq: number;
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
    `SELECT id, tenant, status, pause_reason, updated_at, journal_entries, change_seq, status_seq FROM tasks
     WHERE change_seq > ? ORDER BY change_seq LIMIT ?`,
  ).all(after, n) as ChangeRow[];
  return {
    changes: rows.map(taskChangeOf),
    cursor: rows.at(-1)?.change_seq ?? after,
  };
}

const STATUS_PAGE_MAX = 1000;

/**
 * The tasks (of `tenant`, or every tenant) whose status changed after `after` (a status_seq), in status change
 * order, each once at its latest, read with their rows in one statement (a row and its status_seq agree). A row
 * that cannot be decoded is given as corrupt, never thrown. `after: null`: none, and the cursor of now.
 */
export function readStatusChangeRows(
  db: Database.Database,
  options: { after: number | null; tenant?: string; limit?: number },
): StatusChanges {
  if (options.after === null) {
    const row = prepared(db, 'SELECT coalesce(max(status_seq), 0) AS n FROM tasks').get() as { n: number };
    return { tasks: [], cursor: row.n };
  }
  const n = Math.min(Math.max(1, options.limit ?? 100), STATUS_PAGE_MAX);
  const rows = (
    options.tenant === undefined
      ? prepared(
          db,
          `SELECT status_seq, ${SUMMARISED_TASK_COLUMNS} FROM tasks WHERE status_seq > ? ORDER BY status_seq LIMIT ?`,
        ).all(options.after, n)
      : prepared(
          db,
          `SELECT status_seq, ${SUMMARISED_TASK_COLUMNS} FROM tasks WHERE tenant = ? AND status_seq > ? ORDER BY status_seq LIMIT ?`,
        ).all(options.tenant, options.after, n)
  ) as (TaskRow & { status_seq: number })[];
  const tasks = rows.map(statusChangeOf);
  return { tasks, cursor: rows.at(-1)?.status_seq ?? options.after };
}
