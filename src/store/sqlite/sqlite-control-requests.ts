import type Database from 'better-sqlite3';
import { CodecallError } from '../../errors/index.ts';
import type { ControlRequest, TaskRecord } from '../../spec/index.ts';
import { toTaskRecord } from '../rows.ts';
import { getTaskRow } from './sqlite-update-task.ts';
import { prepared } from './statement-cache.ts';

/** TaskStore.requestControl, inside the caller's IMMEDIATE transaction: a cancel asked before is never downgraded. */
export function requestControlOf(db: Database.Database, taskId: string, action: ControlRequest): TaskRecord {
  const row = getTaskRow(db, taskId);
  if (row.status !== 'running') {
    throw new CodecallError('ILLEGAL_TRANSITION', `Task ${taskId} is ${row.status}, not running`, {
      details: { taskId, status: row.status },
    });
  }
  if (row.requested_action !== 'cancel') {
    db.prepare('UPDATE tasks SET requested_action = ? WHERE id = ?').run(action, taskId);
  }
  return toTaskRecord(getTaskRow(db, taskId));
}

/** TaskStore.listControlRequests: the requests waiting for the tasks this owner holds leases on. */
export function controlRequestsOf(
  db: Database.Database,
  owner: string,
): { taskId: string; action: ControlRequest }[] {
  const rows = prepared(
    db,
    `SELECT id, requested_action FROM tasks
       WHERE lease_owner = ? AND requested_action IS NOT NULL AND status = 'running'`,
  ).all(owner) as { id: string; requested_action: ControlRequest }[];
  return rows.map((r) => ({ taskId: r.id, action: r.requested_action }));
}
