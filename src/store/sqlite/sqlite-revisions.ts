import type Database from 'better-sqlite3';
import { CodecallError } from '../../errors/index.ts';
import type { Revisions, TaskInput } from '../../spec/index.ts';
import { DEFAULT_REVISIONS_LIMIT, MAX_REVISIONS_LIMIT } from '../../spec/index.ts';
import { prepared } from './statement-cache.ts';

// The `task_revisions` table (migration 16): which task revises which (ADR 0034), written with the revision, read
// by the view of the task it revises (`revised_by`) through the index on (revision_of, tenant, created_at, task_id).

/** Notes a revision (a code task with `revisionOf`) beside its row. Call inside the transaction that inserts it. */
export function insertRevisionRow(
  db: Database.Database,
  task: { readonly id: string; readonly input: TaskInput; readonly tenant: string },
  now: number,
): void {
  if (task.input.kind !== 'code' || task.input.revisionOf === undefined) return;
  prepared(
    db,
    'INSERT INTO task_revisions (task_id, revision_of, tenant, created_at) VALUES (?, ?, ?, ?)',
  ).run(task.id, task.input.revisionOf, task.tenant, now);
}

/** TaskStore.listRevisions: the newest `limit` revisions of the task in `tenant`, oldest first, and their count. */
export function readRevisions(
  db: Database.Database,
  taskId: string,
  options: { readonly tenant: string; readonly limit?: number },
): Revisions {
  const limit = options.limit ?? DEFAULT_REVISIONS_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_REVISIONS_LIMIT) {
    throw new CodecallError('INVALID_ARGUMENT', `limit must be an integer from 1 to ${MAX_REVISIONS_LIMIT}`, {
      details: { field: 'limit' },
    });
  }
  // One read transaction: the ids and the count come from the same snapshot. Both are searches of the index alone.
  return db.transaction((): Revisions => {
    const rows = prepared(
      db,
      `SELECT task_id FROM task_revisions WHERE revision_of = ? AND tenant = ?
       ORDER BY created_at DESC, task_id DESC LIMIT ?`,
    ).all(taskId, options.tenant, limit) as { task_id: string }[];
    const total =
      rows.length < limit
        ? rows.length
        : (
            prepared(db, 'SELECT count(*) AS n FROM task_revisions WHERE revision_of = ? AND tenant = ?').get(
              taskId,
              options.tenant,
            ) as { n: number }
          ).n;
    return { taskIds: rows.map((r) => r.task_id).reverse(), total };
  })();
}
