import { CodecallError } from '../../errors/index.ts';
import { canonicalJson, sha256Hex } from '../journal-checksum.ts';
import {
  artifactsDigest,
  COVERED_COLUMNS,
  coversOf,
  extendPin,
  headSig,
  keyFingerprint,
  keyMismatchError,
  pinStart,
  tasksSig,
  TERMINAL,
  vouchedInput,
} from '../audit-macs.ts';
import type { CoveredRow, Covers, Head } from '../audit-macs.ts';
import { all, one } from './pg-sql.ts';
import type { Sql } from './pg-sql.ts';

// The keyed audit chain (ADR 0030) on PostgreSQL: the same covers, MACs and signed heads as on SQLite
// (../audit-macs.ts), so a database migrated from SQLite verifies with the same key. Every caller holds the task's
// row lock, so a task's head is written by one transaction at a time.

/** The task's covers now; the input's digest is taken from the head when there is one (inputs may be large). */
export async function currentCovers(sql: Sql, taskId: string, head: Head | undefined): Promise<Covers> {
  const vouched = head === undefined ? undefined : (JSON.parse(head.covers) as Covers);
  const known = vouchedInput(vouched);
  const row = await one<CoveredRow & { input: string | null }>(
    sql,
    `SELECT ${COVERED_COLUMNS}, ${known === undefined ? 'input' : 'NULL AS input'} FROM tasks WHERE id = $1`,
    [taskId],
  );
  if (row === undefined) throw new CodecallError('NOT_FOUND', `No task ${taskId}`, { details: { taskId } });
  const input = known ?? sha256Hex(row.input ?? '');
  // Bytewise name order, as SQLite sorts: the digest must not depend on the server's collation.
  const artifacts = TERMINAL.has(row.status)
    ? artifactsDigest(
        await all<{ name: string; size: number; sha256: string }>(
          sql,
          'SELECT name, size, sha256 FROM artifacts WHERE task_id = $1 ORDER BY name COLLATE "C"',
          [taskId],
        ),
      )
    : '';
  const start = pinStart(vouched);
  const entries = await all<{ seq: number; checksum: string; created_at: number }>(
    sql,
    'SELECT seq, checksum, created_at FROM journal WHERE task_id = $1 AND seq > $2 ORDER BY seq',
    [taskId, start.journal_seq],
  );
  return { ...coversOf(row, input, () => artifacts), ...extendPin(start, entries) };
}

export async function readHead(sql: Sql, taskId: string): Promise<Head | undefined> {
  return one<Head>(sql, 'SELECT * FROM audit_heads WHERE task_id = $1', [taskId]);
}

export async function writeHead(sql: Sql, key: Buffer, h: Omit<Head, 'sig'>): Promise<void> {
  await sql.query(
    `INSERT INTO audit_heads (task_id, legacy_seq, seq, mac, covers, sig) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (task_id) DO UPDATE SET legacy_seq = excluded.legacy_seq, seq = excluded.seq,
         mac = excluded.mac, covers = excluded.covers, sig = excluded.sig`,
    [h.task_id, h.legacy_seq, h.seq, h.mac, h.covers, headSig(key, h)],
  );
}

/**
 * One more task created (call with its `created` audit row). The increment takes the row's lock until the
 * commit, so creations on several nodes count one after the other and each signs the count it made.
 */
export async function countTask(sql: Sql, key: Buffer): Promise<void> {
  const row = await one<{ tasks: number }>(
    sql,
    'UPDATE audit_key SET tasks = tasks + 1 WHERE id = 1 RETURNING tasks',
  );
  if (row === undefined) return;
  await sql.query('UPDATE audit_key SET tasks_sig = $1 WHERE id = 1', [tasksSig(key, row.tasks)]);
}

/**
 * A write that changes covered fields without a status change (a new pause reason, an error kept on a paused
 * task, artifacts) appends no audit row: the head alone follows it, so the task still matches what is vouched for.
 */
export async function refreshHead(sql: Sql, key: Buffer | undefined, taskId: string): Promise<void> {
  if (key === undefined) return;
  const head = await readHead(sql, taskId);
  if (head === undefined) return;
  const covers = canonicalJson(await currentCovers(sql, taskId, head));
  if (covers !== head.covers) await writeHead(sql, key, { ...head, covers });
}

/**
 * Binds the schema to `key`, run once per store open. The first keyed open records the key's fingerprint and
 * gives every task a signed head marking its rows so far as legacy; a different key than the one recorded is
 * AUDIT_KEY_MISMATCH. The tasks table is locked while that is done: no task is written unseen in between, and two
 * nodes opening at once key it once.
 */
export async function keySchema(sql: Sql, key: Buffer, now: number): Promise<void> {
  const fingerprint = keyFingerprint(key);
  const recorded = async (): Promise<string | undefined> =>
    (await one<{ fingerprint: string }>(sql, 'SELECT fingerprint FROM audit_key WHERE id = 1'))?.fingerprint;
  let known = await recorded();
  if (known === undefined) {
    await sql.query('BEGIN');
    try {
      await sql.query('LOCK TABLE tasks IN SHARE ROW EXCLUSIVE MODE');
      known = (await recorded()) ?? (await install(sql, key, fingerprint, now));
      await sql.query('COMMIT');
    } catch (e) {
      await sql.query('ROLLBACK').catch(() => undefined);
      throw e;
    }
  }
  if (known !== fingerprint) throw keyMismatchError();
}

async function install(sql: Sql, key: Buffer, fingerprint: string, now: number): Promise<string> {
  const tasks = await all<{ id: string; seq: number }>(
    sql,
    'SELECT t.id, coalesce((SELECT max(seq) FROM audit_log a WHERE a.task_id = t.id), 0) AS seq FROM tasks t',
  );
  await sql.query(
    'INSERT INTO audit_key (id, fingerprint, keyed_at, tasks, tasks_sig) VALUES (1, $1, $2, $3, $4)',
    [fingerprint, now, tasks.length, tasksSig(key, tasks.length)],
  );
  for (const t of tasks) {
    const covers = canonicalJson(await currentCovers(sql, t.id, undefined));
    await writeHead(sql, key, { task_id: t.id, legacy_seq: t.seq, seq: t.seq, mac: '', covers });
  }
  return fingerprint;
}
