import type Database from 'better-sqlite3';
import { CodecallError } from '../../errors/index.ts';
import type { NewTaskAttributes, TaskInput } from '../../spec/index.ts';
import { canonicalJson, sha256Hex } from '../journal-checksum.ts';
import { appendAudit } from './sqlite-audit.ts';
import { appendEntries } from './sqlite-journal.ts';
import { prepared } from './statement-cache.ts';

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
    `INSERT INTO tasks (id, status, input, attempts, version, fencing_token, created_at, updated_at, tenant,
       session_id, batch_id, priority, callback_url, max_retries, deadline_at)
     VALUES (?, 'pending', ?, 0, 1, 0, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    id,
    JSON.stringify(input),
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
  const data = {
    code_hash: sha256Hex(input.code),
    tools_hash: sha256Hex(canonicalJson(input.tools ?? null)),
    language: input.language,
    seed: input.seed,
    limits: input.limits ?? null,
  };
  appendEntries(db, id, [{ type: 'task_input', data }], now);
  appendAudit(db, id, 'created', { tenant, actor: task.actor, batch_id: task.batchId }, now);
}
