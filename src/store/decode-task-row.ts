import { CodecallError } from '../errors/index.ts';
import type { CorruptRowDetails, TaskStatus } from '../spec/index.ts';

type JsonColumn = 'input' | 'listed_input' | 'error' | 'execution_log' | 'resources';

/** The columns of a task row (rows.ts) that decoding reads. */
type TaskRow = Readonly<Record<JsonColumn, string | null>> & {
  readonly id: string;
  readonly tenant: string;
  readonly status: TaskStatus;
  readonly created_at: number;
  readonly updated_at: number;
};

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** What each JSON column must hold beyond being JSON: enough for a view and a run to read it without a crash. */
const isInput = (v: unknown): boolean =>
  isObject(v) &&
  typeof v.language === 'string' &&
  ((v.kind === 'code' && typeof v.code === 'string') ||
    (v.kind === 'instruction' && typeof v.instruction === 'string'));

const SHAPES: Readonly<Record<JsonColumn, (v: unknown) => boolean>> = {
  input: isInput,
  listed_input: (v) => v === null || (isObject(v) && isInput(v.input) && isObject(v.listed)),
  error: (v) => v === null || (isObject(v) && typeof v.code === 'string' && typeof v.message === 'string'),
  execution_log: (v) => v === null || Array.isArray(v),
  resources: (v) => v === null || isObject(v),
};

/**
 * Parses a JSON column of a task row. A row edited behind the store's back is CHECKPOINT_CORRUPT naming the task
 * and the column, with what its plain columns still say (`CorruptRowDetails`), so readers can flag it.
 */
export function jsonColumn(row: TaskRow, column: JsonColumn): unknown {
  const text = row[column];
  if (text === null) return null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw corruptRow(row, column, 'is not JSON');
  }
  if (!SHAPES[column](value)) throw corruptRow(row, column, 'is not of its shape');
  return value;
}

/** A row read without its input and without a list form of it. */
export function corruptInput(row: TaskRow): CodecallError {
  return corruptRow(row, 'input', 'is missing');
}

function corruptRow(row: TaskRow, column: string, why: string): CodecallError {
  const details: CorruptRowDetails = {
    log: 'task',
    column,
    taskId: row.id,
    tenant: row.tenant,
    status: row.status,
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
  };
  return new CodecallError('CHECKPOINT_CORRUPT', `Row of task ${row.id} is corrupt: ${column} ${why}`, {
    details,
  });
}
