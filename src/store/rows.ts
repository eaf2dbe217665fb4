import type {
  ControlRequest,
  JournalEntry,
  JournalEntryType,
  PauseReason,
  TaskRecord,
  TaskStatus,
} from '../spec/index.ts';
import { corruptInput, jsonColumn } from './decode-task-row.ts';
import type { ListedInputColumn } from './listed-input-column.ts';
import { isoTime } from './iso-time.ts';

export interface TaskRow {
  id: string;
  status: TaskStatus;
  pause_reason: PauseReason | null;
  /** Null only in a summarised list's row when `listed_input` is set (ADR 0036). */
  input: string | null;
  /** The list's form of a big input (listed-input-column.ts); null when the input is small. */
  listed_input: string | null;
  result: string | null;
  error: string | null;
  attempts: number;
  version: number;
  lease_owner: string | null;
  lease_expires_at: number | null;
  fencing_token: number;
  created_at: number;
  updated_at: number;
  execution_log: string | null;
  resources: string | null;
  requested_action: ControlRequest | null;
  wake_at: number | null;
  tenant: string;
  session_id: string | null;
  batch_id: string | null;
  priority: number;
  callback_url: string | null;
  max_retries: number;
  retries: number;
  run_after: number | null;
  deadline_at: number | null;
}

export interface JournalRow {
  task_id: string;
  seq: number;
  type: JournalEntryType;
  data: string;
  checksum: string;
  created_at: number;
}

/**
 * The columns of a row as a list reads it (ADR 0036): all but `input`, which only a task without a list form of
 * it (a small input, or one written before) gives. `input` is the row's last column, so SQLite then never walks
 * its pages.
 */
export const SUMMARISED_TASK_COLUMNS = `id, status, pause_reason, result, error, attempts, version, lease_owner,
  lease_expires_at, fencing_token, created_at, updated_at, execution_log, resources, requested_action, wake_at,
  tenant, session_id, batch_id, priority, callback_url, max_retries, retries, run_after, deadline_at, listed_input,
  CASE WHEN listed_input IS NULL THEN input END AS input`;

/** The record of a row; CHECKPOINT_CORRUPT (naming the task and column) when a JSON column was garbled. */
export function toTaskRecord(row: TaskRow): TaskRecord {
  // A summarised list selects `input` only where there is no list form of it.
  const listed = row.input === null ? (jsonColumn(row, 'listed_input') as ListedInputColumn | null) : null;
  const input = listed ? listed.input : (jsonColumn(row, 'input') as TaskRecord['input'] | null);
  if (input === null) throw corruptInput(row);
  return {
    id: row.id,
    status: row.status,
    pauseReason: row.pause_reason,
    input,
    ...(listed ? { listedInput: listed.listed } : {}),
    // Opaque to the store (the view decodes it, and flags a result that is no value).
    result: row.result,
    error: jsonColumn(row, 'error') as TaskRecord['error'],
    executionLog: jsonColumn(row, 'execution_log') as TaskRecord['executionLog'],
    resources: jsonColumn(row, 'resources') as TaskRecord['resources'],
    requestedAction: row.requested_action,
    ...(row.status === 'running' && row.lease_owner !== null
      ? { lease: { owner: row.lease_owner, expiresAt: row.lease_expires_at } }
      : {}),
    wakeAt: row.wake_at,
    attempts: row.attempts,
    version: row.version,
    tenant: row.tenant,
    sessionId: row.session_id,
    batchId: row.batch_id,
    priority: row.priority,
    callbackUrl: row.callback_url,
    maxRetries: row.max_retries,
    retries: row.retries,
    runAfter: row.run_after,
    deadlineAt: row.deadline_at,
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
  };
}

export function toJournalEntry(
  taskId: string,
  row: Omit<JournalRow, 'task_id'>,
  data: Record<string, unknown>,
): JournalEntry {
  // The data was parsed as the row's type when the chain was verified (`verifyJournal`).
  return {
    taskId,
    seq: row.seq,
    type: row.type,
    data,
    checksum: row.checksum,
    createdAt: isoTime(row.created_at),
  } as JournalEntry;
}

/** Opaque page cursor: the (created_at, id) of the last task returned. */
export function encodeCursor(row: Pick<TaskRow, 'created_at' | 'id'>): string {
  return Buffer.from(JSON.stringify([row.created_at, row.id])).toString('base64url');
}

export function decodeCursor(cursor: string): { createdAt: number; id: string } | null {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(parsed) && typeof parsed[0] === 'number' && typeof parsed[1] === 'string') {
      return { createdAt: parsed[0], id: parsed[1] };
    }
  } catch {
    // fall through: not a cursor we issued
  }
  return null;
}
