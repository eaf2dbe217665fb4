import type { AuditEntry } from '../../spec/index.ts';
import { canonicalJson, journalChecksumOfText } from '../journal-checksum.ts';
import { readVerifiedChain } from './pg-journal.ts';
import { one } from './pg-sql.ts';
import type { Sql } from './pg-sql.ts';

/** Appends one link to a task's audit log, chained like the journal. Inside a write transaction holding the row. */
export async function appendAudit(
  sql: Sql,
  taskId: string,
  type: string,
  data: Record<string, unknown>,
  now: number,
): Promise<void> {
  const last = await one<{ seq: number; checksum: string }>(
    sql,
    'SELECT seq, checksum FROM audit_log WHERE task_id = $1 ORDER BY seq DESC LIMIT 1',
    [taskId],
  );
  const seq = (last?.seq ?? 0) + 1;
  const text = canonicalJson(data);
  const checksum = journalChecksumOfText(last?.checksum ?? '', seq, type, text);
  await sql.query(
    'INSERT INTO audit_log (task_id, seq, type, data, checksum, created_at) VALUES ($1, $2, $3, $4, $5, $6)',
    [taskId, seq, type, text, checksum, now],
  );
}

/** The audit log's status link: what changed, who changed it, and how far the journal was then. */
export async function auditStatus(
  sql: Sql,
  taskId: string,
  change: { from: string; to: string; pauseReason: string | null; errorCode: string | null; actor: string },
  now: number,
): Promise<void> {
  const head = await one<{ seq: number | null }>(
    sql,
    'SELECT max(seq) AS seq FROM journal WHERE task_id = $1',
    [taskId],
  );
  await appendAudit(
    sql,
    taskId,
    'status',
    {
      from: change.from,
      to: change.to,
      pause_reason: change.pauseReason,
      error_code: change.errorCode,
      actor: change.actor,
      journal_seq: head?.seq ?? 0,
    },
    now,
  );
}

/** Entries with seq > afterSeq (at most `limit`), the chain always verified from seq 1. */
export async function readVerifiedAudit(
  sql: Sql,
  taskId: string,
  afterSeq: number,
  limit?: number,
): Promise<AuditEntry[]> {
  const upTo = limit === undefined || limit < 0 ? -1 : afterSeq + limit;
  const { rows, data } = await readVerifiedChain(sql, 'audit', taskId, 0, upTo);
  return rows
    .map((row, i) => ({
      taskId,
      seq: row.seq,
      type: row.type,
      data: data[i] ?? {},
      checksum: row.checksum,
      createdAt: new Date(row.created_at).toISOString(),
    }))
    .filter((e) => e.seq > afterSeq);
}
