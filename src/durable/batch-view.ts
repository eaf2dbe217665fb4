import type { BatchRecord } from '../spec/index.ts';
import type { BatchView } from '../api/index.ts';

export function batchView(batch: BatchRecord): BatchView {
  return {
    batch_id: batch.id,
    tenant: batch.tenant,
    size: batch.size,
    counts: batch.counts,
    task_ids: batch.taskIds,
    callback_url: batch.callbackUrl,
    created_at: batch.createdAt,
    completed_at: batch.completedAt,
  };
}
