import type Database from 'better-sqlite3';
import { CodecallError } from '../../errors/index.ts';
import type { BatchRecord, NewTaskAttributes, TaskInput, TaskRecord } from '../../spec/index.ts';
import { newTaskId } from '../task-id.ts';
import { toTaskRecord } from '../rows.ts';
import type { TaskRow } from '../rows.ts';
import { insertBatch, readBatch } from './sqlite-batches.ts';
import { taskInputEntryData } from '../task-input-entry.ts';
import { appendAudit } from './sqlite-audit.ts';
import { appendEntries } from './sqlite-journal.ts';
import { prepared } from './statement-cache.ts';
import { listedInputColumn } from '../listed-input-column.ts';
import { insertRevisionRow } from './sqlite-revisions.ts';

/**
 * Inserts a `pending` task with its first journal entry (`task_input`) and its first audit link (`created`).
 * Call inside a write transaction.
 */
export function insertTask(
  db: Database.Database,
  task: {
    id: string;
    input: TaskInput;
    attributes: NewTaskAttributes;
    batchId: string | null;
    actor: string;
  },
  now: number,
): void {
  const { id, input, attributes: a } = task;
  if (prepared(db, 'SELECT 1 FROM tasks WHERE id = ?').get(id) !== undefined) {
    throw new CodecallError('INVALID_ARGUMENT', `Task ${id} already exists`, { details: { taskId: id } });
  }
  const tenant = a.tenant ?? 'default';
  prepared(
    db,
    `INSERT INTO tasks (id, status, input, listed_input, attempts, version, fencing_token, created_at, updated_at,
       tenant, session_id, batch_id, priority, callback_url, max_retries, deadline_at)
     VALUES (?, 'pending', ?, ?, 0, 1, 0, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    id,
    JSON.stringify(input),
    listedInputColumn(input),
    now,
    now,
    tenant,
    a.sessionId ?? null,
    task.batchId,
    a.priority ?? 0,
    a.callbackUrl ?? null,
    a.maxRetries ?? 0,
    a.deadlineAt ?? null,
  );
  insertRevisionRow(db, { id, input, tenant }, now);
  const data = taskInputEntryData(input);
  appendEntries(db, id, [{ type: 'task_input', data }], now);
  appendAudit(db, id, 'created', { tenant, actor: task.actor, batch_id: task.batchId }, now);
}

function readTask(db: Database.Database, id: string): TaskRecord {
  return toTaskRecord(prepared(db, 'SELECT * FROM tasks WHERE id = ?').get(id) as TaskRow);
}

/**
 * TaskStore.createTask inside a write transaction (a savepoint of a group commit): with an idempotency key used
 * before for the same request, the task it made; for another request, IDEMPOTENCY_CONFLICT.
 */
export function createTaskRows(
  db: Database.Database,
  input: TaskInput,
  options: {
    id?: string;
    idempotency?: { readonly key: string; readonly requestHash: string };
    attributes?: NewTaskAttributes;
    actor?: string;
  },
  now: number,
): TaskRecord {
  const idem = options.idempotency;
  if (idem) {
    const used = prepared(db, 'SELECT request_hash, task_id FROM idempotency_keys WHERE key = ?').get(
      idem.key,
    ) as { request_hash: string; task_id: string } | undefined;
    if (used && used.request_hash !== idem.requestHash) {
      throw new CodecallError(
        'IDEMPOTENCY_CONFLICT',
        'this Idempotency-Key was already used for a different request',
        {
          details: { task_id: used.task_id },
        },
      );
    }
    if (used) return readTask(db, used.task_id);
  }
  const id = options.id ?? newTaskId(now);
  insertTask(
    db,
    { id, input, attributes: options.attributes ?? {}, batchId: null, actor: options.actor ?? 'system' },
    now,
  );
  if (idem) {
    prepared(
      db,
      'INSERT INTO idempotency_keys (key, request_hash, task_id, created_at) VALUES (?, ?, ?, ?)',
    ).run(idem.key, idem.requestHash, id, now);
  }
  return readTask(db, id);
}

/** TaskStore.createBatch inside a write transaction: the batch, then its tasks in submission order. */
export function createBatchRows(
  db: Database.Database,
  tasks: readonly { readonly input: TaskInput; readonly attributes?: NewTaskAttributes }[],
  options: { tenant: string; callbackUrl?: string | null; id?: string; actor?: string },
  now: number,
): { batch: BatchRecord; tasks: TaskRecord[] } {
  const batchId = options.id ?? `batch_${newTaskId(now).replace(/^task_/, '')}`;
  insertBatch(
    db,
    { id: batchId, tenant: options.tenant, callbackUrl: options.callbackUrl ?? null, size: tasks.length },
    now,
  );
  // Ids are monotonic, so the batch's tasks list and claim in submission order.
  const ids = tasks.map((t) => {
    const id = newTaskId(now);
    const attributes = { ...t.attributes, tenant: options.tenant };
    insertTask(db, { id, input: t.input, attributes, batchId, actor: options.actor ?? 'system' }, now);
    return id;
  });
  const batch = readBatch(db, batchId);
  if (batch === null) throw new CodecallError('STORE_ERROR', `Batch ${batchId} vanished`);
  return { batch, tasks: ids.map((id) => readTask(db, id)) };
}
