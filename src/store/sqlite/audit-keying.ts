import { createHmac } from 'node:crypto';
import type Database from 'better-sqlite3';
import { CodecallError } from '../../errors/index.ts';
import { canonicalJson, sha256Hex } from '../journal-checksum.ts';
import { prepared } from './statement-cache.ts';

/**
 * The keyed audit chain (ADR 0030). Each audit row appended with the key carries `covers` (the task fields it
 * vouches for), `data_mac` (HMAC of what the unkeyed checksum covers) and `mac` (HMAC of every column, `covers`
 * and the previous row's mac); `audit_heads` holds a signed pointer to each task's last row, so a cut-off tail
 * shows. The key never enters the database: `audit_key` holds only an HMAC of a fixed label (its fingerprint).
 */
const keys = new WeakMap<Database.Database, Buffer>();

export const TERMINAL = new Set(['succeeded', 'failed', 'cancelled']);

export function hmac(key: Buffer, value: unknown): string {
  return createHmac('sha256', key).update(canonicalJson(value)).digest('hex');
}

export function keyFingerprint(key: Buffer): string {
  return hmac(key, 'codecall audit key v1');
}

/** The key this connection appends with, or undefined (rows go in unkeyed: `verify` names them). */
export function auditKeyOf(db: Database.Database): Buffer | undefined {
  return keys.get(db);
}

/**
 * The task fields a row vouches for: identity and what the submitter asked for always, outcome digests, and once
 * terminal `updated_at` and the logs; plus the journal pin (`journalPin`).
 */
export type Covers = Record<string, string | number | null>;

type CoveredRow = {
  tenant: string;
  created_at: number;
  session_id: string | null;
  batch_id: string | null;
  priority: number;
  callback_url: string | null;
  max_retries: number;
  deadline_at: number | null;
  status: string;
  pause_reason: string | null;
  error: string | null;
  result: string | null;
  execution_log: string | null;
  resources: string | null;
  updated_at: number;
};

/** Covers fields checked against the journal, not against the task row. */
export const JOURNAL_FIELDS = new Set(['journal_seq', 'journal_digest']);

const digest = (text: string | null): string | null => (text === null ? null : sha256Hex(text));

/** What the covers vouch for of a task's artifacts: each one's name, size and SHA-256, in name order. */
export function artifactsDigest(files: readonly { name: string; size: number; sha256: string }[]): string {
  return sha256Hex(canonicalJson(files.map((f) => [f.name, f.size, f.sha256])));
}

function storedArtifacts(db: Database.Database, taskId: string): string {
  const rows = prepared(db, 'SELECT name, size, sha256 FROM artifacts WHERE task_id = ? ORDER BY name').all(
    taskId,
  ) as { name: string; size: number; sha256: string }[];
  return artifactsDigest(rows);
}

/** `artifacts`: the task's artifacts digest (artifactsDigest), read only for an ended task. */
export function coversOf(row: CoveredRow, input: string, artifacts: () => string): Covers {
  // Logs change while a task runs without a head refresh: vouched for once it ended, like updated_at.
  const ended = TERMINAL.has(row.status);
  return {
    tenant: row.tenant,
    created_at: row.created_at,
    session_id: row.session_id,
    batch_id: row.batch_id,
    input,
    priority: row.priority,
    callback_url: row.callback_url,
    max_retries: row.max_retries,
    deadline_at: row.deadline_at,
    status: row.status,
    pause_reason: row.pause_reason,
    error: digest(row.error),
    result: digest(row.result),
    execution_log: ended ? digest(row.execution_log) : null,
    resources: ended ? digest(row.resources) : null,
    updated_at: ended ? row.updated_at : null,
    // The files a finished task left (a report, a chart): written before its end, vouched for from it.
    artifacts: ended ? artifacts() : null,
  };
}

const COVERED = `SELECT tenant, created_at, session_id, batch_id, priority, callback_url, max_retries, deadline_at,
  status, pause_reason, error, result, execution_log, resources, updated_at FROM tasks WHERE id = ?`;

/**
 * One link of the journal's keyed pin: the unkeyed journal chain has no key (a rewrite can recompute it) and its
 * checksums leave out the time, so each audit row vouches for a digest over every entry's checksum and time.
 */
export function journalDigestStep(prev: string, e: { seq: number; checksum: string; created_at: number }) {
  return sha256Hex(`${prev}\n${e.seq}\n${e.checksum}\n${e.created_at}`);
}

/** The journal pin after the entries appended since `from` (the last pin; none: the journal's start). */
function journalPin(
  db: Database.Database,
  taskId: string,
  from: Covers | undefined,
): { journal_seq: number; journal_digest: string } {
  let seq = typeof from?.journal_seq === 'number' ? from.journal_seq : 0;
  let d = typeof from?.journal_digest === 'string' ? from.journal_digest : '';
  const rows = prepared(
    db,
    'SELECT seq, checksum, created_at FROM journal WHERE task_id = ? AND seq > ? ORDER BY seq',
  ).iterate(taskId, seq) as IterableIterator<{ seq: number; checksum: string; created_at: number }>;
  for (const e of rows) {
    d = journalDigestStep(d, e);
    seq = e.seq;
  }
  return { journal_seq: seq, journal_digest: d };
}

/** The task's covers now; the input's digest is taken from the head when there is one (inputs may be large). */
export function currentCovers(db: Database.Database, taskId: string, head: Head | undefined): Covers {
  const row = prepared(db, COVERED).get(taskId) as CoveredRow;
  const vouched = head === undefined ? undefined : (JSON.parse(head.covers) as Covers);
  const known = vouched?.input;
  const input =
    typeof known === 'string'
      ? known
      : sha256Hex(
          (prepared(db, 'SELECT input FROM tasks WHERE id = ?').get(taskId) as { input: string }).input,
        );
  return {
    ...coversOf(row, input, () => storedArtifacts(db, taskId)),
    ...journalPin(db, taskId, vouched),
  };
}

export interface Head {
  readonly task_id: string;
  /** Rows up to this seq were written before the database was keyed (unkeyed, "legacy"). */
  readonly legacy_seq: number;
  readonly seq: number;
  readonly mac: string;
  readonly covers: string;
  readonly sig: string;
}

export function headSig(key: Buffer, h: Omit<Head, 'sig'>): string {
  return hmac(key, ['head', h.task_id, h.legacy_seq, h.seq, h.mac, h.covers]);
}

export function readHead(db: Database.Database, taskId: string): Head | undefined {
  return prepared(db, 'SELECT * FROM audit_heads WHERE task_id = ?').get(taskId) as Head | undefined;
}

export function writeHead(db: Database.Database, key: Buffer, h: Omit<Head, 'sig'>): void {
  prepared(
    db,
    `INSERT INTO audit_heads (task_id, legacy_seq, seq, mac, covers, sig) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (task_id) DO UPDATE SET legacy_seq = excluded.legacy_seq, seq = excluded.seq,
         mac = excluded.mac, covers = excluded.covers, sig = excluded.sig`,
  ).run(h.task_id, h.legacy_seq, h.seq, h.mac, h.covers, headSig(key, h));
}

/** What a keyed row's two MACs cover. */
export function dataMac(
  key: Buffer,
  r: { task_id: string; seq: number; type: string; data: string },
): string {
  return hmac(key, ['audit-data', r.task_id, r.seq, r.type, r.data]);
}

export function linkMac(
  key: Buffer,
  prevMac: string,
  r: {
    task_id: string;
    seq: number;
    type: string;
    data: string;
    checksum: string;
    created_at: number;
    covers: string;
    data_mac: string;
  },
): string {
  return hmac(key, [
    'audit-link',
    prevMac,
    r.task_id,
    r.seq,
    r.type,
    r.data,
    r.checksum,
    r.created_at,
    r.covers,
    r.data_mac,
  ]);
}

/**
 * Binds `key` to this connection's appends. The first keyed open of a database records the key's fingerprint
 * and gives every task a signed head marking its rows so far as legacy (so stripping the keying later shows);
 * a different key than the one recorded is AUDIT_KEY_MISMATCH: appending with it would break every chain.
 */
export function keyConnection(db: Database.Database, key: Buffer, now: number): void {
  const fingerprint = keyFingerprint(key);
  const recorded = (): string | undefined =>
    (
      db.prepare('SELECT fingerprint FROM audit_key WHERE id = 1').get() as
        { fingerprint: string } | undefined
    )?.fingerprint;
  // Read first: a keyed database opens without a write. One that cannot be written is not keyed now (nothing
  // can be appended to it either); the first writable open keys it.
  let known = recorded();
  try {
    known ??= db.transaction(() => recorded() ?? install(db, key, fingerprint, now)).immediate();
  } catch (e) {
    if (String((e as { code?: unknown }).code).startsWith('SQLITE_READONLY')) return;
    throw e;
  }
  if (known !== fingerprint) {
    throw new CodecallError(
      'AUDIT_KEY_MISMATCH',
      'the audit key is not the one this database was keyed with (replaced key file, or the wrong CODECALL_AUDIT_KEY)',
    );
  }
  keys.set(db, key);
}

/** The signed count of tasks: a task deleted with its rows and head (the cascade) still shows. */
export function tasksSig(key: Buffer, tasks: number): string {
  return hmac(key, ['tasks', tasks]);
}

/** One more task created (call with its `created` audit row). */
export function countTask(db: Database.Database, key: Buffer): void {
  const { tasks } = prepared(db, 'SELECT tasks FROM audit_key WHERE id = 1').get() as { tasks: number };
  prepared(db, 'UPDATE audit_key SET tasks = ?, tasks_sig = ? WHERE id = 1').run(
    tasks + 1,
    tasksSig(key, tasks + 1),
  );
}

function install(db: Database.Database, key: Buffer, fingerprint: string, now: number): string {
  const { n } = db.prepare('SELECT count(*) AS n FROM tasks').get() as { n: number };
  db.prepare(
    'INSERT INTO audit_key (id, fingerprint, keyed_at, tasks, tasks_sig) VALUES (1, ?, ?, ?, ?)',
  ).run(fingerprint, now, n, tasksSig(key, n));
  const tasks = db
    .prepare(
      'SELECT t.id, coalesce((SELECT max(seq) FROM audit_log a WHERE a.task_id = t.id), 0) AS seq FROM tasks t',
    )
    .all() as { id: string; seq: number }[];
  for (const t of tasks) {
    const covers = canonicalJson(currentCovers(db, t.id, undefined));
    writeHead(db, key, { task_id: t.id, legacy_seq: t.seq, seq: t.seq, mac: '', covers });
  }
  return fingerprint;
}

/**
 * A write that changes covered fields without a status change (a new pause reason, an error kept on a paused
 * task) appends no audit row: the head alone follows it, so the task still matches what is vouched for.
 */
export function refreshHead(db: Database.Database, taskId: string): void {
  const key = keys.get(db);
  if (key === undefined) return;
  const head = readHead(db, taskId);
  if (head === undefined) return;
  const covers = canonicalJson(currentCovers(db, taskId, head));
  if (covers !== head.covers) writeHead(db, key, { ...head, covers });
}
