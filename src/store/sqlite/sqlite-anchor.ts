import { createHmac, timingSafeEqual } from 'node:crypto';
import type Database from 'better-sqlite3';
import { canonicalJson } from '../journal-checksum.ts';

/**
 * A keyed anchor of a task database: per task, an HMAC-SHA256 of each field that must never change and of every
 * journal and audit row as stored (all columns, timestamps included), the whole signed with the same key. The key
 * lives outside the database, so a rewrite that recomputes the unkeyed checksum chains, an edited timestamp, tenant
 * or error, a swapped row or a cut-off tail all differ from the anchor taken before.
 */
export interface AuditAnchor {
  readonly version: 1;
  readonly created_at: string;
  readonly tasks: Record<string, AnchoredTask>;
  readonly mac: string;
}

interface AnchoredTask {
  readonly fields: Record<string, string>;
  readonly journal: readonly string[];
  readonly audit: readonly string[];
}

export interface AnchorProblem {
  readonly taskId: string;
  readonly log: 'task' | 'journal' | 'audit' | 'anchor';
  readonly seq: number;
  /** edited-field, edited-row, missing-rows, missing-task, bad-key */
  readonly kind: string;
  readonly message: string;
}

// A task's identity never changes; its outcome never changes once it is terminal.
const IMMUTABLE = ['input', 'tenant', 'session_id', 'batch_id', 'created_at'];
const FINAL = ['status', 'result', 'error'];
const TERMINAL = new Set(['succeeded', 'failed', 'cancelled']);
const LOGS = { journal: 'journal', audit: 'audit_log' } as const;

function mac(key: Buffer, value: unknown): string {
  return createHmac('sha256', key).update(canonicalJson(value)).digest('hex');
}

function columns(db: Database.Database): Set<string> {
  const info = db.prepare('PRAGMA table_info(tasks)').all() as { name: string }[];
  return new Set(info.map((c) => c.name));
}

function hasTable(db: Database.Database, name: string): boolean {
  return db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) !== undefined;
}

function taskFields(key: Buffer, row: Record<string, unknown>, cols: Set<string>): Record<string, string> {
  const names = [...IMMUTABLE, ...(TERMINAL.has(String(row.status)) ? FINAL : [])].filter((n) => cols.has(n));
  // The task id is part of each MAC, so a field copied from another task does not match.
  return Object.fromEntries(names.map((n) => [n, mac(key, [row.id, n, row[n] ?? null])]));
}

function rowMacs(db: Database.Database, key: Buffer, log: keyof typeof LOGS, taskId: string): string[] {
  if (!hasTable(db, LOGS[log])) return [];
  const rows = db
    .prepare(
      `SELECT task_id, seq, type, data, checksum, created_at FROM ${LOGS[log]} WHERE task_id = ? ORDER BY seq`,
    )
    .iterate(taskId) as IterableIterator<Record<string, unknown>>;
  const out: string[] = [];
  for (const r of rows) out.push(mac(key, [log, r.task_id, r.seq, r.type, r.data, r.checksum, r.created_at]));
  return out;
}

/** Signs the database as it is now. */
export function createAnchor(db: Database.Database, key: Buffer, now = new Date()): AuditAnchor {
  const cols = columns(db);
  const tasks: Record<string, AnchoredTask> = {};
  for (const row of db.prepare('SELECT * FROM tasks ORDER BY id').iterate() as IterableIterator<
    Record<string, unknown>
  >) {
    const id = String(row.id);
    tasks[id] = {
      fields: taskFields(key, row, cols),
      journal: rowMacs(db, key, 'journal', id),
      audit: rowMacs(db, key, 'audit', id),
    };
  }
  const body = { version: 1 as const, created_at: now.toISOString(), tasks };
  return { ...body, mac: mac(key, body) };
}

/**
 * Compares the database with an anchor taken earlier. Rows appended since are fine (the logs are append-only);
 * any anchored field or row that differs or is gone is a problem, named by task, log, seq and kind.
 */
export function verifyAnchor(db: Database.Database, key: Buffer, anchor: AuditAnchor): AnchorProblem[] {
  const { mac: signed, ...body } = anchor;
  const expected = Buffer.from(mac(key, body), 'hex');
  const given = Buffer.from(String(signed), 'hex');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    return [
      {
        taskId: '-',
        log: 'anchor',
        seq: 0,
        kind: 'bad-key',
        message: 'the anchor does not verify with this key: wrong key, or the anchor file was edited',
      },
    ];
  }
  const cols = columns(db);
  const problems: AnchorProblem[] = [];
  const read = db.prepare('SELECT * FROM tasks WHERE id = ?');
  for (const [taskId, anchored] of Object.entries(anchor.tasks)) {
    const row = read.get(taskId) as Record<string, unknown> | undefined;
    if (row === undefined) {
      problems.push({
        taskId,
        log: 'task',
        seq: 0,
        kind: 'missing-task',
        message: `task ${taskId} was deleted`,
      });
      continue;
    }
    const now = taskFields(key, row, cols);
    for (const [field, value] of Object.entries(anchored.fields)) {
      if (now[field] === value) continue;
      // A terminal task's outcome anchored, then the task no longer terminal, reads as an edited status.
      const kind = `edited-field:${field}`;
      problems.push({
        taskId,
        log: 'task',
        seq: 0,
        kind,
        message: `task ${taskId}: field ${field} was edited`,
      });
    }
    for (const log of ['journal', 'audit'] as const) {
      const current = rowMacs(db, key, log, taskId);
      const was = anchored[log];
      const edited = was.findIndex((m, i) => i < current.length && current[i] !== m);
      if (edited >= 0) {
        problems.push({
          taskId,
          log,
          seq: edited + 1,
          kind: 'edited-row',
          message: `${log} of task ${taskId}: row seq ${edited + 1} differs from the anchor (edited, swapped or rewritten)`,
        });
      }
      if (current.length < was.length) {
        problems.push({
          taskId,
          log,
          seq: current.length + 1,
          kind: 'missing-rows',
          message: `${log} of task ${taskId}: the anchor has ${was.length} rows, the database ${current.length} (truncated)`,
        });
      }
    }
  }
  return problems;
}

/** `createAnchor` over the database file at `path`, opened read-only. */
export async function anchorDatabase(options: { path: string; key: Buffer }): Promise<AuditAnchor> {
  const { default: Sqlite } = await import('better-sqlite3');
  const db = new Sqlite(options.path, { readonly: true, fileMustExist: true });
  try {
    return db.transaction(() => createAnchor(db, options.key))();
  } finally {
    db.close();
  }
}

/** `verifyAnchor` over the database file at `path`, opened read-only. */
export async function verifyDatabaseAnchor(options: {
  path: string;
  key: Buffer;
  anchor: AuditAnchor;
}): Promise<AnchorProblem[]> {
  const { default: Sqlite } = await import('better-sqlite3');
  const db = new Sqlite(options.path, { readonly: true, fileMustExist: true });
  try {
    return db.transaction(() => verifyAnchor(db, options.key, options.anchor))();
  } finally {
    db.close();
  }
}
