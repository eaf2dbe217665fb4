import type { TaskPatch } from '../spec/index.ts';
import { assertStatusChange } from './status-change.ts';
import type { TaskRow } from './rows.ts';

export type PatchedColumns = Pick<
  TaskRow,
  | 'status'
  | 'pause_reason'
  | 'result'
  | 'error'
  | 'execution_log'
  | 'resources'
  | 'requested_action'
  | 'wake_at'
  | 'lease_owner'
  | 'lease_expires_at'
  | 'run_after'
  | 'retries'
>;

/** The columns a patch leaves a task with; ILLEGAL_TRANSITION for a status change the table does not allow. */
export function patchedColumns(row: TaskRow, patch: TaskPatch): PatchedColumns {
  let status = patch.status ?? row.status;
  assertStatusChange(row.id, row.status, status);
  // A cancel asked of the running task wins over the pause its run ends in (approval, input, ...).
  const cancelWins = row.status === 'running' && status === 'paused' && row.requested_action === 'cancel';
  if (cancelWins) status = 'cancelled';
  const changed = status !== row.status;
  // Leaving `paused` drops its reason; leaving `running` drops the lease (the token stays, for fencing).
  const pauseReason = cancelWins
    ? null
    : patch.pauseReason !== undefined
      ? patch.pauseReason
      : changed && status !== 'paused'
        ? null
        : row.pause_reason;
  const keepLease = status === 'running';
  return {
    status,
    pause_reason: pauseReason,
    result: patch.result !== undefined ? patch.result : row.result,
    error: cancelWins
      ? JSON.stringify({ code: 'CANCELLED', message: 'cancelled by request' })
      : jsonPatch(patch.error, row.error),
    execution_log: jsonPatch(patch.executionLog, row.execution_log),
    resources: jsonPatch(patch.resources, row.resources),
    // A control request belongs to the run it was meant for; a wake-up to a pause.
    requested_action: keepLease ? row.requested_action : null,
    wake_at: patch.wakeAt !== undefined ? patch.wakeAt : status === 'paused' ? row.wake_at : null,
    lease_owner: keepLease ? row.lease_owner : null,
    lease_expires_at: keepLease ? row.lease_expires_at : null,
    // A backoff belongs to the retry it delays.
    run_after: patch.runAfter !== undefined ? patch.runAfter : status === 'pending' ? row.run_after : null,
    retries: patch.retries ?? row.retries,
  };
}

/** A patched JSON column: undefined keeps the stored text, null clears it. */
function jsonPatch(value: unknown, stored: string | null): string | null {
  if (value === undefined) return stored;
  return value === null ? null : JSON.stringify(value);
}
