import type Database from 'better-sqlite3';
import { batchRecordOf } from '../batch-record.ts';
import type { BatchRow } from '../batch-record.ts';
import { CodecallError } from '../../errors/index.ts';
import type { BatchRecord, TaskStatus } from '../../spec/index.ts';
import { prepared } from './statement-cache.ts';

export function insertBatch(
  db: Database.Database,
  batch: { id: string; tenant: string; callbackUrl: string | null; size: number },
  now: number,
): void {
  if (prepared(db, 'SELECT 1 FROM batches WHERE id = ?').get(batch.id) !== undefined) {
    throw new CodecallError('INVALID_ARGUMENT', `Batch ${batch.id} already exists`, {
      details: { batchId: batch.id },
    });
  }
  prepared(db, 'INSERT INTO batches (id, tenant, callback_url, size, created_at) VALUES (?, ?, ?, ?, ?)').run(
    batch.id,
    batch.tenant,
    batch.callbackUrl,
    batch.size,
    now,
  );
}

/** The batch with its tasks' ids (in submission order) and a count per status. */
export function readBatch(db: Database.Database, id: string): BatchRecord | null {
  const row = prepared(db, 'SELECT * FROM batches WHERE id = ?').get(id) as BatchRow | undefined;
  if (row === undefined) return null;
  const tasks = prepared(
    db,
    'SELECT id, status FROM tasks WHERE batch_id = ? ORDER BY created_at, rowid',
  ).all(id) as { id: string; status: TaskStatus }[];
  return batchRecordOf(row, tasks);
}
