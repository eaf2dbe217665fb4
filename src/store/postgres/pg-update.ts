import { CodecallError } from '../../errors/index.ts';
import type { ControlRequest, JournalEntryInput, TaskPatch, TaskRecord } from '../../spec/index.ts';
import { patchedColumns } from '../patched-columns.ts';
import type { TaskRow } from '../rows.ts';
import { toTaskRecord } from '../rows.ts';
import { TERMINAL } from '../audit-macs.ts';
import { canonicalJson, journalChecksumOfText } from '../journal-checksum.ts';
import { appendAudit } from './pg-audit.ts';
import { appendEntries } from './pg-append.ts';
import { refreshHead } from './pg-audit-keying.ts';
import { fencedError } from './pg-journal.ts';
import { all, one, oneNamed } from './pg-sql.ts';
import type { Sql } from './pg-sql.ts';

/**
 * What an update reads of the row it patches (not the input), locked until the transaction ends, with what its
 * audit link needs: the journal's length and the audit log's last link.
 */
const PATCHED_ROW = `SELECT id, status, pause_reason, result, error, execution_log, resources, requested_action, wake_at,
  lease_owner, lease_expires_at, run_after, retries, version, fencing_token,
  (SELECT max(seq) FROM journal WHERE task_id = tasks.id) AS journal_seq,
  (SELECT seq FROM audit_log WHERE task_id = tasks.id ORDER BY seq DESC LIMIT 1) AS audit_seq,
  (SELECT checksum FROM audit_log WHERE task_id = tasks.id ORDER BY seq DESC LIMIT 1) AS audit_checksum
  FROM tasks WHERE id = $1 FOR UPDATE`;

type PatchedRow = TaskRow & {
  journal_seq: number | null;
  audit_seq: number | null;
  audit_checksum: string | null;
};

/** TaskStore.updateTask inside a transaction: guard, patch, journal, audit. */
export async function updateTaskRow(
  sql: Sql,
  key: Buffer | undefined,
  taskId: string,
  patch: TaskPatch,
  options: ({ fencingToken: number } | { expectedVersion: number }) & {
    append?: readonly JournalEntryInput[];
    actor?: string;
  },
  now: number,
): Promise<TaskRecord> {
  const row = await oneNamed<PatchedRow>(sql, PATCHED_ROW, [taskId]);
  if (row === undefined) throw new CodecallError('NOT_FOUND', `No task ${taskId}`, { details: { taskId } });
  if ('fencingToken' in options) {
    if (row.fencing_token !== options.fencingToken)
      throw fencedError(taskId, options.fencingToken, row.fencing_token);
  } else if (row.version !== options.expectedVersion) {
    throw new CodecallError('VERSION_CONFLICT', `Task ${taskId} is at version ${row.version}`, {
      details: { taskId, version: row.version, expectedVersion: options.expectedVersion },
    });
  }
  const next = patchedColumns(row, patch);
  // The entries first: the status link names the journal's length with them.
  const appended =
    options.append && options.append.length > 0 ? await appendEntries(sql, taskId, options.append, now) : [];
  const changed = next.status !== row.status;
  const error = next.error === null ? null : (JSON.parse(next.error) as { code?: string });
  const link = canonicalJson({
    from: row.status,
    to: next.status,
    pause_reason: next.pause_reason,
    error_code: error?.code ?? null,
    actor: options.actor ?? row.lease_owner ?? 'system',
    journal_seq: appended.at(-1)?.seq ?? row.journal_seq ?? 0,
  });
  const seq = (row.audit_seq ?? 0) + 1;
  // Unkeyed, the patch and its status link are one statement; keyed, appendAudit writes the link after.
  const inline = changed && key === undefined;
  const updated = await oneNamed<TaskRow>(
    sql,
    `WITH patched AS (
       UPDATE tasks SET status = $1, pause_reason = $2, result = $3, error = $4, execution_log = $5, resources = $6,
         requested_action = $7, wake_at = $8, version = version + 1, lease_owner = $9, lease_expires_at = $10,
         run_after = $11, retries = $12, updated_at = $13 WHERE id = $14 RETURNING *
     )${
       inline
         ? `, link AS (
       INSERT INTO audit_log (task_id, seq, type, data, checksum, created_at) VALUES ($14, $15, 'status', $16, $17, $13)
     )`
         : ''
     }
     SELECT * FROM patched`,
    [
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
      ...(inline ? [seq, link, journalChecksumOfText(row.audit_checksum ?? '', seq, 'status', link)] : []),
    ],
  );
  if (updated === undefined)
    throw new CodecallError('NOT_FOUND', `No task ${taskId}`, { details: { taskId } });
  if (changed && key !== undefined) {
    await appendAudit(sql, key, taskId, 'status', JSON.parse(link) as Record<string, unknown>, now);
  } else if (
    !changed &&
    (next.error !== row.error ||
      next.result !== row.result ||
      next.pause_reason !== row.pause_reason ||
      TERMINAL.has(next.status))
  ) {
    await refreshHead(sql, key, taskId);
  }
  return toTaskRecord(updated);
}

/** TaskStore.requestControl inside a transaction: a cancel asked before is never downgraded. */
export async function requestControlOf(
  sql: Sql,
  taskId: string,
  action: ControlRequest,
): Promise<TaskRecord> {
  const row = await one<{ status: string; requested_action: ControlRequest | null }>(
    sql,
    'SELECT status, requested_action FROM tasks WHERE id = $1 FOR UPDATE',
    [taskId],
  );
  if (row === undefined) throw new CodecallError('NOT_FOUND', `No task ${taskId}`, { details: { taskId } });
  if (row.status !== 'running') {
    throw new CodecallError('ILLEGAL_TRANSITION', `Task ${taskId} is ${row.status}, not running`, {
      details: { taskId, status: row.status },
    });
  }
  if (row.requested_action !== 'cancel') {
    await sql.query('UPDATE tasks SET requested_action = $1 WHERE id = $2', [action, taskId]);
  }
  return toTaskRecord((await one<TaskRow>(sql, 'SELECT * FROM tasks WHERE id = $1', [taskId])) as TaskRow);
}

/** TaskStore.listControlRequests. */
export async function controlRequestsOf(
  sql: Sql,
  owner: string,
): Promise<{ taskId: string; action: ControlRequest }[]> {
  const rows = await all<{ id: string; requested_action: ControlRequest }>(
    sql,
    `SELECT id, requested_action FROM tasks WHERE lease_owner = $1 AND requested_action IS NOT NULL AND status = 'running'`,
    [owner],
  );
  return rows.map((r) => ({ taskId: r.id, action: r.requested_action }));
}
