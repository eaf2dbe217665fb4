import type { BatchRecord, TaskStatus } from '../spec/index.ts';

/** A `batches` row as both stores read it. */
export interface BatchRow {
  id: string;
  tenant: string;
  callback_url: string | null;
  size: number;
  created_at: number;
  completed_at: number | null;
}

/** The batch with its tasks' ids (in submission order) and a count per status. */
export function batchRecordOf(
  row: BatchRow,
  tasks: readonly { id: string; status: TaskStatus }[],
): BatchRecord {
  const counts: Record<TaskStatus, number> = {
    pending: 0,
    running: 0,
    paused: 0,
    succeeded: 0,
    failed: 0,
    cancelled: 0,
  };
  for (const t of tasks) counts[t.status]++;
  return {
    id: row.id,
    tenant: row.tenant,
    callbackUrl: row.callback_url,
    size: row.size,
    counts,
    taskIds: tasks.map((t) => t.id),
    createdAt: new Date(row.created_at).toISOString(),
    completedAt: row.completed_at === null ? null : new Date(row.completed_at).toISOString(),
  };
}
