import type Database from 'better-sqlite3';
import { CodecallError } from '../../errors/index.ts';
import type { JournalEntryInput, TaskPatch, TaskRecord } from '../../spec/index.ts';
import { patchedColumns } from '../patched-columns.ts';
import { toTaskRecord } from '../rows.ts';
import type { TaskRow } from '../rows.ts';
import { TERMINAL } from '../audit-macs.ts';
import { refreshHead } from './audit-keying.ts';
import { auditStatus } from './sqlite-audit.ts';
import { appendEntries } from './sqlite-journal.ts';
import { prepared } from './statement-cache.ts';

/** Every task read goes through one cached statement (runners read their task on each claim and pause). */
export function findTaskRow(db: Database.Database, id: string): TaskRow | undefined {
  return prepared(db, 'SELECT * FROM tasks WHERE id = ?').get(id) as TaskRow | undefined;
}

export function getTaskRow(db: Database.Database, id: string): TaskRow {
  const row = findTaskRow(db, id);
  if (row === undefined) throw new CodecallError('NOT_FOUND', `No task ${id}`, { details: { taskId: id } });
  return row;
}

export function assertFenced(row: Pick<TaskRow, 'id' | 'fencing_token'>, fencingToken: number): void {
  if (row.fencing_token !== fencingToken) {
    throw new CodecallError('FENCED', `Fencing token ${fencingToken} is stale for task ${row.id}`, {
      details: { taskId: row.id, fencingToken, currentToken: row.fencing_token },
    });
  }
}

export type UpdateGuard = ({ fencingToken: number } | { expectedVersion: number }) & {
  append?: readonly JournalEntryInput[];
  actor?: string;
};

/** What an update reads of the row it patches: everything but the input (a program of up to 1 MiB, never patched). */
const PATCHED_ROW = `SELECT id, status, pause_reason, result, error, execution_log, resources, requested_action, wake_at,
  lease_owner, lease_expires_at, run_after, retries, version, fencing_token FROM tasks WHERE id = ?`;

function getPatchedRow(db: Database.Database, id: string): TaskRow {
  const row = prepared(db, PATCHED_ROW).get(id) as TaskRow | undefined;
  if (row === undefined) throw new CodecallError('NOT_FOUND', `No task ${id}`, { details: { taskId: id } });
  return row;
}

/** TaskStore.updateTask, inside the caller's IMMEDIATE transaction: guard, patch, journal, audit. */
export function updateTaskRow(
  db: Database.Database,
  taskId: string,
  patch: TaskPatch,
  options: UpdateGuard,
  now: number,
): TaskRecord {
  const row = getPatchedRow(db, taskId);
  if ('fencingToken' in options) assertFenced(row, options.fencingToken);
  else if (row.version !== options.expectedVersion) {
    throw new CodecallError('VERSION_CONFLICT', `Task ${taskId} is at version ${row.version}`, {
      details: { taskId, version: row.version, expectedVersion: options.expectedVersion },
    });
  }
  const next = patchedColumns(row, patch);
  prepared(
    db,
    `UPDATE tasks SET status = ?, pause_reason = ?, result = ?, error = ?, execution_log = ?, resources = ?,
       requested_action = ?, wake_at = ?, version = version + 1, lease_owner = ?, lease_expires_at = ?,
       run_after = ?, retries = ?, updated_at = ? WHERE id = ?`,
  ).run(
    next.status,
    next.pause_reason,
    next.result,
    next.error,
    next.execution_log,
    next.resources,
    next.requested_action,
    next.wake_at,
    next.lease_owner,
    next.lease_expires_at,
    next.run_after,
    next.retries,
    now,
    taskId,
  );
  if (options.append && options.append.length > 0) appendEntries(db, taskId, options.append, now);
  if (next.status !== row.status) {
    const error = next.error === null ? null : (JSON.parse(next.error) as { code?: string });
    auditStatus(
      db,
      taskId,
      {
        from: row.status,
        to: next.status,
        pauseReason: next.pause_reason,
        errorCode: error?.code ?? null,
        actor: options.actor ?? row.lease_owner ?? 'system',
      },
      now,
    );
  } else if (
    next.error !== row.error ||
    next.result !== row.result ||
    next.pause_reason !== row.pause_reason ||
    TERMINAL.has(next.status)
  ) {
    refreshHead(db, taskId);
  }
  return toTaskRecord(getTaskRow(db, taskId));
}

/** The fencing check of a journal append reads only the token, not the task's input. */
export function getTokenRow(db: Database.Database, id: string): Pick<TaskRow, 'id' | 'fencing_token'> {
  const row = prepared(db, 'SELECT id, fencing_token FROM tasks WHERE id = ?').get(id) as
    Pick<TaskRow, 'id' | 'fencing_token'> | undefined;
  if (row === undefined) throw new CodecallError('NOT_FOUND', `No task ${id}`, { details: { taskId: id } });
  return row;
}
