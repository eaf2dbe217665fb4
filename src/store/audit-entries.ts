import type { AuditEntry } from '../spec/index.ts';
import type { JournalRow } from './rows.ts';

/** The audit entries after `afterSeq` of a task's verified audit chain (rows and their parsed data), as both stores give them. */
export function auditEntriesAfter(
  taskId: string,
  chain: { rows: readonly Omit<JournalRow, 'task_id'>[]; data: readonly Record<string, unknown>[] },
  afterSeq: number,
): AuditEntry[] {
  return chain.rows
    .map((row, i) => ({
      taskId,
      seq: row.seq,
      type: row.type,
      data: chain.data[i] ?? {},
      checksum: row.checksum,
      createdAt: new Date(row.created_at).toISOString(),
    }))
    .filter((e) => e.seq > afterSeq);
}
