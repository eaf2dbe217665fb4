import { CodecallError } from '../../errors/index.ts';
import { DEFAULT_REVISIONS_LIMIT, MAX_REVISIONS_LIMIT } from '../../spec/index.ts';
import type { CorruptTask, Revisions, TaskCountFilter, TaskFilter, TaskRecord } from '../../spec/index.ts';
import { decodeCursor, SUMMARISED_TASK_COLUMNS } from '../rows.ts';
import type { TaskRow } from '../rows.ts';
import { taskPage } from '../task-page.ts';
import { all, one } from './pg-sql.ts';
import type { Sql } from './pg-sql.ts';

const DEFAULT_LIMIT = 50;
const MAX_LIMIT = 1000;

/** Builds a statement's `$n` placeholders as values are added. */
export class Params {
  readonly values: unknown[] = [];
  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}

/** The WHERE clauses of a task list or count: equality on status, tenant, session and batch. */
export function taskWhere(filter: TaskCountFilter, params: Params): string[] {
  const where: string[] = [];
  for (const [column, value] of [
    ['status', filter.status],
    ['tenant', filter.tenant],
    ['session_id', filter.sessionId],
    ['batch_id', filter.batchId],
  ] as const) {
    if (value !== undefined) where.push(`${column} = ${params.add(value)}`);
  }
  return where;
}

export async function countTaskRows(sql: Sql, filter: TaskCountFilter): Promise<number> {
  const params = new Params();
  const where = taskWhere(filter, params);
  const row = await one<{ n: number }>(
    sql,
    `SELECT count(*) AS n FROM tasks${where.length > 0 ? ` WHERE ${where.join(' AND ')}` : ''}`,
    params.values,
  );
  return row?.n ?? 0;
}

/** TaskStore.listTasks: one page in creation order (oldest or newest first), with the cursor of the next. */
export async function listTaskRows(
  sql: Sql,
  filter: TaskFilter,
): Promise<{ tasks: TaskRecord[]; nextCursor: string | null; corrupt: CorruptTask[] }> {
  const limit = filter.limit ?? DEFAULT_LIMIT;
  if (filter.order !== undefined && filter.order !== 'oldest' && filter.order !== 'newest') {
    throw new CodecallError('INVALID_ARGUMENT', 'order must be "oldest" or "newest"', {
      details: { order: filter.order },
    });
  }
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
    throw new CodecallError('INVALID_ARGUMENT', `limit must be an integer from 1 to ${MAX_LIMIT}`, {
      details: { limit },
    });
  }
  const params = new Params();
  const where = taskWhere(filter, params);
  if (filter.pauseReason !== undefined) where.push(`pause_reason = ${params.add(filter.pauseReason)}`);
  if (filter.deadlineBefore !== undefined) {
    where.push(
      `status = 'paused' AND deadline_at IS NOT NULL AND deadline_at <= ${params.add(filter.deadlineBefore)}`,
    );
  }
  if (filter.dueBefore !== undefined) {
    where.push(`status = 'paused' AND wake_at IS NOT NULL AND wake_at <= ${params.add(filter.dueBefore)}`);
  }
  if (filter.cursor !== undefined) {
    const after = decodeCursor(filter.cursor);
    if (after === null) throw new CodecallError('INVALID_ARGUMENT', 'Invalid cursor');
    const beyond = filter.order === 'newest' ? '<' : '>';
    where.push(`(created_at, id) ${beyond} (${params.add(after.createdAt)}, ${params.add(after.id)})`);
  }
  const columns = filter.summarised === true ? SUMMARISED_TASK_COLUMNS : '*';
  const rows = await all<TaskRow>(
    sql,
    `SELECT ${columns} FROM tasks ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''}
     ORDER BY ${filter.order === 'newest' ? 'created_at DESC, id DESC' : 'created_at, id'} LIMIT ${params.add(limit + 1)}`,
    params.values,
  );
  return taskPage(rows, limit);
}

/** TaskStore.listRevisions: the newest `limit` revisions of the task in `tenant`, oldest first, and their count. */
export async function readRevisions(
  sql: Sql,
  taskId: string,
  options: { readonly tenant: string; readonly limit?: number },
): Promise<Revisions> {
  const limit = options.limit ?? DEFAULT_REVISIONS_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_REVISIONS_LIMIT) {
    throw new CodecallError('INVALID_ARGUMENT', `limit must be an integer from 1 to ${MAX_REVISIONS_LIMIT}`, {
      details: { field: 'limit' },
    });
  }
  const rows = await all<{ task_id: string; total: number }>(
    sql,
    `SELECT task_id, count(*) OVER () AS total FROM task_revisions WHERE revision_of = $1 AND tenant = $2
     ORDER BY created_at DESC, task_id DESC LIMIT $3`,
    [taskId, options.tenant, limit],
  );
  return { taskIds: rows.map((r) => r.task_id).reverse(), total: rows[0]?.total ?? 0 };
}
