import { CodecallError } from '../../errors/index.ts';
import { batchRecordOf } from '../batch-record.ts';
import type { BatchRow } from '../batch-record.ts';
import { EMPTY_JOURNAL_SUMMARY, journalEntryProblem, summarizeJournal } from '../../spec/index.ts';
import type {
  BatchRecord,
  JournalEntry,
  NewTaskAttributes,
  TaskInput,
  TaskRecord,
  TaskStatus,
} from '../../spec/index.ts';
import { canonicalJson, journalChecksumOfText } from '../journal-checksum.ts';
import { taskInputEntryData } from '../task-input-entry.ts';
import { listedInputColumn } from '../listed-input-column.ts';
import { toTaskRecord } from '../rows.ts';
import type { TaskRow } from '../rows.ts';
import { newTaskId } from '../task-id.ts';
import { appendAudit } from './pg-audit.ts';
import { all, named, one, oneNamed } from './pg-sql.ts';
import type { Sql } from './pg-sql.ts';

// Creating and reading tasks and batches (TaskStore.createTask, createBatch, getTask, getBatch).

export async function findTaskRow(sql: Sql, id: string): Promise<TaskRow | undefined> {
  return one<TaskRow>(sql, 'SELECT * FROM tasks WHERE id = $1', [id]);
}

export async function getTaskRow(sql: Sql, id: string): Promise<TaskRow> {
  const row = await findTaskRow(sql, id);
  if (row === undefined) throw new CodecallError('NOT_FOUND', `No task ${id}`, { details: { taskId: id } });
  return row;
}

export async function readTask(sql: Sql, id: string): Promise<TaskRecord> {
  return toTaskRecord(await getTaskRow(sql, id));
}

/**
 * Inserts a `pending` task with its first journal entry (`task_input`), its summary and its first audit link
 * (`created`): all first rows of their chains, so written without reading anything (two statements).
 */
async function insertTask(
  sql: Sql,
  key: Buffer | undefined,
  task: {
    id: string;
    input: TaskInput;
    attributes: NewTaskAttributes;
    batchId: string | null;
    actor: string;
  },
  now: number,
): Promise<TaskRow> {
  const { id, input, attributes: a } = task;
  const tenant = a.tenant ?? 'default';
  const data = taskInputEntryData(input);
  const problem = journalEntryProblem('task_input', data);
  if (problem !== null) throw new CodecallError('INVALID_ARGUMENT', `Journal entry is malformed: ${problem}`);
  const text = canonicalJson(data);
  const checksum = journalChecksumOfText('', 1, 'task_input', text);
  const entry = {
    taskId: id,
    seq: 1,
    type: 'task_input',
    data: JSON.parse(text) as unknown,
    checksum,
    createdAt: new Date(now).toISOString(),
  } as JournalEntry;
  const audit = canonicalJson({ tenant, actor: task.actor, batch_id: task.batchId });
  const inserted = await oneNamed<TaskRow>(
    sql,
    `INSERT INTO tasks (id, status, input, listed_input, attempts, version, fencing_token, created_at, updated_at,
       tenant, session_id, batch_id, priority, callback_url, max_retries, deadline_at)
     VALUES ($1, 'pending', $2, $3, 0, 1, 0, $4, $4, $5, $6, $7, $8, $9, $10, $11)
     ON CONFLICT (id) DO NOTHING RETURNING *`,
    [
      id,
      JSON.stringify(input),
      listedInputColumn(input),
      now,
      tenant,
      a.sessionId ?? null,
      task.batchId,
      a.priority ?? 0,
      a.callbackUrl ?? null,
      a.maxRetries ?? 0,
      a.deadlineAt ?? null,
    ],
  );
  if (inserted === undefined) {
    throw new CodecallError('INVALID_ARGUMENT', `Task ${id} already exists`, { details: { taskId: id } });
  }
  const revisionOf = input.kind === 'code' ? (input.revisionOf ?? null) : null;
  const summary = summarizeJournal([entry], EMPTY_JOURNAL_SUMMARY);
  // Unkeyed, the `created` link goes in with the rest; keyed, appendAudit computes what it vouches for (ADR 0030).
  const auditRow = `INSERT INTO audit_log (task_id, seq, type, data, checksum, created_at) VALUES ($1, 1, 'created', $6, $7, $3)`;
  await sql.query(
    named(
      `WITH j AS (
       INSERT INTO journal (task_id, seq, type, checksum, created_at, fencing_token, data)
       VALUES ($1, 1, 'task_input', $2, $3, 0, $4)
     ), s AS (
       INSERT INTO journal_summaries (task_id, seq, checksum, summary) VALUES ($1, 1, $2, $5)
     ), c AS (
       UPDATE task_changes SET journal_bytes = $10, journal_entries = 1 WHERE task_id = $1
     ), r AS (
       INSERT INTO task_revisions (task_id, revision_of, tenant, created_at)
       SELECT $1, $8, $9, $3 WHERE $8::text IS NOT NULL
     )
     ${key === undefined ? auditRow : 'SELECT $6::text, $7::text'}`,
      [
        id,
        checksum,
        now,
        text,
        JSON.stringify(summary),
        audit,
        journalChecksumOfText('', 1, 'created', audit),
        revisionOf,
        tenant,
        Buffer.byteLength(text),
      ],
    ),
  );

  if (key !== undefined) {
    await appendAudit(sql, key, id, 'created', { tenant, actor: task.actor, batch_id: task.batchId }, now);
  }
  return inserted;
}

/**
 * TaskStore.createTask inside a transaction. An idempotency key is taken first (INSERT ... ON CONFLICT), so two
 * nodes given the same key at once make one task: the second waits for the first's commit and then finds it.
 */
export async function createTaskRows(
  sql: Sql,
  key: Buffer | undefined,
  input: TaskInput,
  options: {
    id?: string;
    idempotency?: { readonly key: string; readonly requestHash: string };
    attributes?: NewTaskAttributes;
    actor?: string;
  },
  now: number,
): Promise<TaskRecord> {
  const idem = options.idempotency;
  const id = options.id ?? newTaskId(now);
  if (idem) {
    const used = await one<{ request_hash: string; task_id: string }>(
      sql,
      'SELECT request_hash, task_id FROM idempotency_keys WHERE key = $1',
      [idem.key],
    );
    if (used) return usedKey(sql, used, idem.requestHash);
  }
  const row = await insertTask(
    sql,
    key,
    { id, input, attributes: options.attributes ?? {}, batchId: null, actor: options.actor ?? 'system' },
    now,
  );
  if (idem) {
    const taken = await sql.query(
      `INSERT INTO idempotency_keys (key, request_hash, task_id, created_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (key) DO NOTHING`,
      [idem.key, idem.requestHash, id, now],
    );
    // Another node took the key while this task was written: this transaction is rolled back and the caller
    // retries, finding the key's task (a serialization failure is retried by `transaction`).
    if (taken.rowCount === 0) {
      throw Object.assign(new Error('idempotency key taken concurrently'), { code: '40001' });
    }
  }
  return toTaskRecord(row);
}

async function usedKey(
  sql: Sql,
  used: { request_hash: string; task_id: string },
  requestHash: string,
): Promise<TaskRecord> {
  if (used.request_hash !== requestHash) {
    throw new CodecallError(
      'IDEMPOTENCY_CONFLICT',
      'this Idempotency-Key was already used for a different request',
      {
        details: { task_id: used.task_id },
      },
    );
  }
  return readTask(sql, used.task_id);
}

/** TaskStore.createBatch inside a transaction: the batch, then its tasks in submission order. */
export async function createBatchRows(
  sql: Sql,
  key: Buffer | undefined,
  tasks: readonly { readonly input: TaskInput; readonly attributes?: NewTaskAttributes }[],
  options: { tenant: string; callbackUrl?: string | null; id?: string; actor?: string },
  now: number,
): Promise<{ batch: BatchRecord; tasks: TaskRecord[] }> {
  const batchId = options.id ?? `batch_${newTaskId(now).replace(/^task_/, '')}`;
  const inserted = await sql.query(
    `INSERT INTO batches (id, tenant, callback_url, size, created_at) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (id) DO NOTHING`,
    [batchId, options.tenant, options.callbackUrl ?? null, tasks.length, now],
  );
  if (inserted.rowCount === 0) {
    throw new CodecallError('INVALID_ARGUMENT', `Batch ${batchId} already exists`, { details: { batchId } });
  }
  const rows: TaskRow[] = [];
  for (const t of tasks) {
    const attributes = { ...t.attributes, tenant: options.tenant };
    const task = {
      id: newTaskId(now),
      input: t.input,
      attributes,
      batchId,
      actor: options.actor ?? 'system',
    };
    rows.push(await insertTask(sql, key, task, now));
  }
  const batch = await readBatch(sql, batchId);
  if (batch === null) throw new CodecallError('STORE_ERROR', `Batch ${batchId} vanished`);
  return { batch, tasks: rows.map(toTaskRecord) };
}

/** The batch with its tasks' ids (in submission order: ids grow) and a count per status. */
export async function readBatch(sql: Sql, id: string): Promise<BatchRecord | null> {
  const row = await one<BatchRow>(sql, 'SELECT * FROM batches WHERE id = $1', [id]);
  if (row === undefined) return null;
  const tasks = await all<{ id: string; status: TaskStatus }>(
    sql,
    'SELECT id, status FROM tasks WHERE batch_id = $1 ORDER BY created_at, id',
    [id],
  );
  return batchRecordOf(row, tasks);
}
