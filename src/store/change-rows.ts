import { corruptTaskOf } from '../spec/index.ts';
import type { CorruptTask, PauseReason, TaskChange, TaskRecord, TaskStatus } from '../spec/index.ts';
import { toTaskRecord } from './rows.ts';
import type { TaskRow } from './rows.ts';

// The change feeds' rows (readChanges, readStatusChanges) as both stores read them.

export interface ChangeRow {
  readonly id: string;
  readonly tenant: string;
  readonly status: TaskStatus;
  readonly pause_reason: PauseReason | null;
  readonly updated_at: number;
  readonly journal_entries: number;
  readonly status_seq: number;
}

/** The change columns (the order column of each store is read beside them). */
export const CHANGE_COLUMNS = 'id, tenant, status, pause_reason, updated_at, journal_entries, status_seq';

export function taskChangeOf(r: ChangeRow): TaskChange {
  return {
    taskId: r.id,
    tenant: r.tenant,
    status: r.status,
    pauseReason: r.pause_reason,
    updatedAt: new Date(r.updated_at).toISOString(),
    journalEntries: r.journal_entries,
    statusSeq: r.status_seq,
  };
}

/** A status change's task as of its row: a row that cannot be decoded is given as corrupt, never thrown. */
export function statusChangeOf(row: TaskRow & { status_seq: number }): {
  seq: number;
  task: TaskRecord | CorruptTask;
} {
  try {
    return { seq: row.status_seq, task: toTaskRecord(row) };
  } catch (e) {
    const c = corruptTaskOf(e);
    if (c === null) throw e;
    return { seq: row.status_seq, task: c };
  }
}
