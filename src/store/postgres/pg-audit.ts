import { auditEntriesAfter } from '../audit-entries.ts';
import type { AuditEntry } from '../../spec/index.ts';
import { dataMac, linkMac } from '../audit-macs.ts';
import { canonicalJson, journalChecksumOfText } from '../journal-checksum.ts';
import { countTask, currentCovers, readHead, writeHead } from './pg-audit-keying.ts';
import { readVerifiedChain } from './pg-journal.ts';
import { one } from './pg-sql.ts';
import type { Sql } from './pg-sql.ts';

/**
 * Appends one link to a task's audit log, chained like the journal; with the store's audit key also keyed (ADR
 * 0030): what it vouches for of the task row, its MACs, and the task's signed head. Inside a write transaction
 * holding the task's row, after the row was written.
 */
export async function appendAudit(
  sql: Sql,
  key: Buffer | undefined,
  taskId: string,
  type: string,
  data: Record<string, unknown>,
  now: number,
): Promise<void> {
  const last = await one<{ seq: number; checksum: string; mac: string | null }>(
    sql,
    'SELECT seq, checksum, mac FROM audit_log WHERE task_id = $1 ORDER BY seq DESC LIMIT 1',
    [taskId],
  );
  const seq = (last?.seq ?? 0) + 1;
  const text = canonicalJson(data);
  const checksum = journalChecksumOfText(last?.checksum ?? '', seq, type, text);
  if (key === undefined) {
    await sql.query(
      'INSERT INTO audit_log (task_id, seq, type, data, checksum, created_at) VALUES ($1, $2, $3, $4, $5, $6)',
      [taskId, seq, type, text, checksum, now],
    );
    return;
  }
  const head = await readHead(sql, taskId);
  const row = { task_id: taskId, seq, type, data: text, checksum, created_at: now };
  const covers = canonicalJson(await currentCovers(sql, taskId, head));
  const data_mac = dataMac(key, row);
  const mac = linkMac(key, last?.mac ?? '', { ...row, covers, data_mac });
  await sql.query(
    `INSERT INTO audit_log (task_id, seq, type, data, checksum, created_at, covers, data_mac, mac)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [taskId, seq, type, text, checksum, now, covers, data_mac, mac],
  );
  if (type === 'created') await countTask(sql, key);
  // A task created before the keying has a head marking its legacy rows; one created unkeyed since has none.
  await writeHead(sql, key, { task_id: taskId, legacy_seq: head?.legacy_seq ?? seq - 1, seq, mac, covers });
}

/** The audit log's status link: what changed, who changed it, and how far the journal was then. */
export async function auditStatus(
  sql: Sql,
  key: Buffer | undefined,
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
    key,
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
  return auditEntriesAfter(taskId, await readVerifiedChain(sql, 'audit', taskId, 0, upTo), afterSeq);
}
