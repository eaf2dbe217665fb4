import type Database from 'better-sqlite3';
import { canonicalJson, sha256Hex } from '../journal-checksum.ts';
import {
  artifactsDigest,
  coversOf,
  COVERED_COLUMNS,
  extendPin,
  headSig,
  keyFingerprint,
  keyMismatchError,
  pinStart,
  tasksSig,
  vouchedInput,
} from '../audit-macs.ts';
import type { CoveredRow, Covers, Head } from '../audit-macs.ts';
import { prepared } from './statement-cache.ts';

/**
 * The keyed audit chain (ADR 0030) on SQLite. Each audit row appended with the key carries `covers` (the task
 * fields it vouches for), `data_mac` (HMAC of what the unkeyed checksum covers) and `mac` (HMAC of every column,
 * `covers` and the previous row's mac); `audit_heads` holds a signed pointer to each task's last row, so a cut-off
 * tail shows. The key never enters the database: `audit_key` holds only an HMAC of a fixed label (its
 * fingerprint). What the MACs are over is shared with PostgreSQL (../audit-macs.ts).
 */
const keys = new WeakMap<Database.Database, Buffer>();

/** The key this connection appends with, or undefined (rows go in unkeyed: `verify` names them). */
export function auditKeyOf(db: Database.Database): Buffer | undefined {
  return keys.get(db);
}

function storedArtifacts(db: Database.Database, taskId: string): string {
  const rows = prepared(db, 'SELECT name, size, sha256 FROM artifacts WHERE task_id = ? ORDER BY name').all(
    taskId,
  ) as { name: string; size: number; sha256: string }[];
  return artifactsDigest(rows);
}

const COVERED = `SELECT ${COVERED_COLUMNS} FROM tasks WHERE id = ?`;

/** The journal pin after the entries appended since `from` (the last pin; none: the journal's start). */
function journalPin(
  db: Database.Database,
  taskId: string,
  from: Covers | undefined,
): { journal_seq: number; journal_digest: string } {
  const start = pinStart(from);
  const rows = prepared(
    db,
    'SELECT seq, checksum, created_at FROM journal WHERE task_id = ? AND seq > ? ORDER BY seq',
  ).iterate(taskId, start.journal_seq) as IterableIterator<{
    seq: number;
    checksum: string;
    created_at: number;
  }>;
  return extendPin(start, rows);
}

/** The task's covers now; the input's digest is taken from the head when there is one (inputs may be large). */
export function currentCovers(db: Database.Database, taskId: string, head: Head | undefined): Covers {
  const row = prepared(db, COVERED).get(taskId) as CoveredRow;
  const vouched = head === undefined ? undefined : (JSON.parse(head.covers) as Covers);
  const input =
    vouchedInput(vouched) ??
    sha256Hex((prepared(db, 'SELECT input FROM tasks WHERE id = ?').get(taskId) as { input: string }).input);
  return {
    ...coversOf(row, input, () => storedArtifacts(db, taskId)),
    ...journalPin(db, taskId, vouched),
  };
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
  if (known !== fingerprint) throw keyMismatchError();
  keys.set(db, key);
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
