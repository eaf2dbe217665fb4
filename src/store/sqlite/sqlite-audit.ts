import { auditEntriesAfter } from '../audit-entries.ts';
import type Database from 'better-sqlite3';
import type { AuditEntry } from '../../spec/index.ts';
import { canonicalJson, journalChecksumOfText } from '../journal-checksum.ts';
import { readVerifiedChain } from './sqlite-journal.ts';
import { dataMac, linkMac } from '../audit-macs.ts';
import { auditKeyOf, countTask, currentCovers, readHead, writeHead } from './audit-keying.ts';
import { prepared } from './statement-cache.ts';

/**
 * Appends one link to a task's audit log, chained like the journal; with the connection's audit key also keyed
 * (ADR 0030): what it vouches for of the task row, its MACs, and the task's signed head. Call inside a write
 * transaction, after the task row was written.
 */
export function appendAudit(
  db: Database.Database,
  taskId: string,
  type: string,
  data: Record<string, unknown>,
  now: number,
): void {
  const last = prepared(
    db,
    'SELECT seq, checksum, mac FROM audit_log WHERE task_id = ? ORDER BY seq DESC LIMIT 1',
  ).get(taskId) as { seq: number; checksum: string; mac: string | null } | undefined;
  const seq = (last?.seq ?? 0) + 1;
  const text = canonicalJson(data);
  const checksum = journalChecksumOfText(last?.checksum ?? '', seq, type, text);
  const key = auditKeyOf(db);
  if (key === undefined) {
    prepared(
      db,
      'INSERT INTO audit_log (task_id, seq, type, data, checksum, created_at) VALUES (?, ?, ?, ?, ?, ?)',
    ).run(taskId, seq, type, text, checksum, now);
    return;
  }
  const head = readHead(db, taskId);
  const row = { task_id: taskId, seq, type, data: text, checksum, created_at: now };
  const covers = canonicalJson(currentCovers(db, taskId, head));
  const data_mac = dataMac(key, row);
  const mac = linkMac(key, last?.mac ?? '', { ...row, covers, data_mac });
  prepared(
    db,
    `INSERT INTO audit_log (task_id, seq, type, data, checksum, created_at, covers, data_mac, mac)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(taskId, seq, type, text, checksum, now, covers, data_mac, mac);
  if (type === 'created') countTask(db, key);
  // A task created before the keying has a head marking its legacy rows; one created unkeyed since has none.
  writeHead(db, key, { task_id: taskId, legacy_seq: head?.legacy_seq ?? seq - 1, seq, mac, covers });
}

/** The audit log's status link: what changed, who changed it, and how far the journal was then. */
export function auditStatus(
  db: Database.Database,
  taskId: string,
  change: { from: string; to: string; pauseReason: string | null; errorCode: string | null; actor: string },
  now: number,
): void {
  const head = prepared(db, 'SELECT max(seq) AS seq FROM journal WHERE task_id = ?').get(taskId) as {
    seq: number | null;
  };
  appendAudit(
    db,
    taskId,
    'status',
    {
      from: change.from,
      to: change.to,
      pause_reason: change.pauseReason,
      error_code: change.errorCode,
      actor: change.actor,
      journal_seq: head.seq ?? 0,
    },
    now,
  );
}

/**
 * Entries with seq > afterSeq (at most `limit`). Unlike a journal read, the chain is always verified from seq 1:
 * audit logs are short and read rarely, and a rewritten link must show up whichever page is read.
 */
export function readVerifiedAudit(
  db: Database.Database,
  taskId: string,
  afterSeq: number,
  limit?: number,
): AuditEntry[] {
  const upTo = limit === undefined || limit < 0 ? -1 : afterSeq + limit;
  return auditEntriesAfter(taskId, readVerifiedChain(db, 'audit', taskId, 0, upTo), afterSeq);
}
