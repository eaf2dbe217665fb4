import type Database from 'better-sqlite3';
import { CodecallError } from '../../errors/index.ts';
import type { CorruptTask, TaskFilter, TaskRecord } from '../../spec/index.ts';
import { SUMMARISED_TASK_COLUMNS, decodeCursor } from '../rows.ts';
import type { TaskRow } from '../rows.ts';
import { taskPage } from '../task-page.ts';
import { taskWhere } from './task-where.ts';

const DEFAULT_LIMIT = 50;
const MAX_LIMIT = 1000;

/** TaskStore.listTasks: one page in creation order (oldest or newest first), with the cursor of the next. */
export function listTaskRows(
  db: Database.Database,
  filter: TaskFilter,
): { tasks: TaskRecord[]; nextCursor: string | null; corrupt: CorruptTask[] } {
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
  const { where, params } = taskWhere(filter);
  if (filter.pauseReason !== undefined) {
    where.push('pause_reason = ?');
    params.push(filter.pauseReason);
  }
  if (filter.deadlineBefore !== undefined) {
    where.push("status = 'paused' AND deadline_at IS NOT NULL AND deadline_at <= ?");
    params.push(filter.deadlineBefore);
  }
  if (filter.dueBefore !== undefined) {
    where.push("status = 'paused' AND wake_at IS NOT NULL AND wake_at <= ?");
    params.push(filter.dueBefore);
  }
  if (filter.cursor !== undefined) {
    const after = decodeCursor(filter.cursor);
    if (after === null) throw new CodecallError('INVALID_ARGUMENT', 'Invalid cursor');
    const beyond = filter.order === 'newest' ? '<' : '>';
    where.push(`(created_at ${beyond} ? OR (created_at = ? AND id ${beyond} ?))`);
    params.push(after.createdAt, after.createdAt, after.id);
  }
  const columns = filter.summarised === true ? SUMMARISED_TASK_COLUMNS : '*';
  const sql = `SELECT ${columns} FROM tasks ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''}
               ORDER BY ${filter.order === 'newest' ? 'created_at DESC, id DESC' : 'created_at, id'} LIMIT ?`;
  const rows = db.prepare(sql).all(...params, limit + 1) as TaskRow[];
  return taskPage(rows, limit);
}
