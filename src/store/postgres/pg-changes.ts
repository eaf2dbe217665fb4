import type { PauseReason, StatusChanges, TaskChanges, TaskStatus } from '../../spec/index.ts';
import { statusChangeOf, taskChangeOf } from '../change-rows.ts';
import { SUMMARISED_TASK_COLUMNS } from '../rows.ts';
import type { TaskRow } from '../rows.ts';
import { all, one } from './pg-sql.ts';
import type { Sql } from './pg-sql.ts';

const DEFAULT_LIMIT = 1000;
const COLUMNS =
  't.id, t.tenant, t.status, t.pause_reason, t.updated_at, c.journal_entries, t.status_seq, c.change_xid';
const MAX_LIMIT = 1000;

interface ChangeRow {
  readonly id: string;
  readonly tenant: string;
  readonly status: TaskStatus;
  readonly pause_reason: PauseReason | null;
  readonly updated_at: number;
  readonly journal_entries: number;
  readonly change_xid: number;
  readonly status_seq: number;
}

/** The id of the oldest transaction still running: every change of an older one is committed or gone for good. */
const HORIZON = 'pg_snapshot_xmin(pg_current_snapshot())::text::bigint';

/**
 * The tasks changed after `after` (ADR 0042): the cursor is a transaction id, and only changes of transactions
 * older than the horizon are given, in (transaction, change) order, so none can later appear behind the cursor.
 * A page never splits one transaction's changes (it ends before the transaction that would take it over `limit`,
 * unless that transaction alone is over it, then it is given whole).
 */
export async function readChangeRows(sql: Sql, after: number | null, limit?: number): Promise<TaskChanges> {
  if (after === null) {
    const row = await one<{ n: number }>(sql, `SELECT ${HORIZON} - 1 AS n`);
    return { changes: [], cursor: row?.n ?? 0 };
  }
  const n = Math.min(Math.max(1, limit ?? DEFAULT_LIMIT), MAX_LIMIT);
  const rows = await all<ChangeRow>(
    sql,
    `SELECT ${COLUMNS} FROM task_changes AS c JOIN tasks AS t ON t.id = c.task_id
     WHERE c.change_xid > $1 AND c.change_xid < ${HORIZON} ORDER BY c.change_xid, c.change_seq LIMIT $2`,
    [after, n + 1],
  );
  let page = rows;
  if (rows.length > n) {
    const cut = rows[n - 1]?.change_xid;
    page = rows.slice(0, n);
    // The last transaction may go on past the page: leave it whole for the next one, unless it is all there is.
    if (cut === rows[n]?.change_xid) {
      const before = page.filter((r) => r.change_xid !== cut);
      page =
        before.length > 0
          ? before
          : await all<ChangeRow>(
              sql,
              `SELECT ${COLUMNS} FROM task_changes AS c JOIN tasks AS t ON t.id = c.task_id
               WHERE c.change_xid = $1 ORDER BY c.change_seq`,
              [cut],
            );
    }
  }
  return {
    changes: page.map(taskChangeOf),
    cursor: page.at(-1)?.change_xid ?? after,
  };
}

const STATUS_PAGE_MAX = 1000;

/**
 * The tasks whose status changed after `after` (a status_seq: numbered at commit, in commit order), each once at
 * its latest, with its row.
 */
export async function readStatusChangeRows(
  sql: Sql,
  options: { after: number | null; tenant?: string; limit?: number },
): Promise<StatusChanges> {
  if (options.after === null) {
    const row = await one<{ n: number }>(sql, 'SELECT coalesce(max(status_seq), 0) AS n FROM tasks');
    return { tasks: [], cursor: row?.n ?? 0 };
  }
  const n = Math.min(Math.max(1, options.limit ?? 100), STATUS_PAGE_MAX);
  const rows =
    options.tenant === undefined
      ? await all<TaskRow & { status_seq: number }>(
          sql,
          `SELECT status_seq, ${SUMMARISED_TASK_COLUMNS} FROM tasks WHERE status_seq > $1 ORDER BY status_seq LIMIT $2`,
          [options.after, n],
        )
      : await all<TaskRow & { status_seq: number }>(
          sql,
          `SELECT status_seq, ${SUMMARISED_TASK_COLUMNS} FROM tasks WHERE tenant = $1 AND status_seq > $2
           ORDER BY status_seq LIMIT $3`,
          [options.tenant, options.after, n],
        );
  const tasks = rows.map(statusChangeOf);
  return { tasks, cursor: rows.at(-1)?.status_seq ?? options.after };
}
