import type Database from 'better-sqlite3';
import { CodecallError } from '../../errors/index.ts';
import { journalEntryProblem } from '../../spec/index.ts';
import type { JournalEntry, JournalEntryInput, JournalLimits } from '../../spec/index.ts';
import { canonicalJson, journalChecksumOfText } from '../journal-checksum.ts';
import { checkJournalLimits } from '../journal-limits.ts';
import { verifyJournal } from '../verify-journal.ts';
import { toJournalEntry } from '../rows.ts';
import { prepared } from './statement-cache.ts';
import { foldAppended, journalHead } from './sqlite-summary.ts';
import type { JournalRow } from '../rows.ts';

/**
 * Appends after the task's last entry, chaining checksums. Call inside a write transaction. Every entry is
 * checked before the first is written, so a bad one writes nothing.
 */
export function appendEntries(
  db: Database.Database,
  taskId: string,
  entries: readonly JournalEntryInput[],
  now: number,
  limits?: JournalLimits,
): JournalEntry[] {
  const texts = entries.map((entry) => {
    // What would not parse when read back is not written (a task with it could never run again).
    const problem = journalEntryProblem(entry.type, entry.data);
    if (problem !== null) {
      throw new CodecallError('INVALID_ARGUMENT', `Journal entry is malformed: ${problem}`, {
        details: { taskId, type: entry.type },
      });
    }
    return canonicalJson(entry.data);
  });
  countEntries(db, taskId, texts, limits);
  const last = journalHead(db, taskId);
  const insert = prepared(
    db,
    'INSERT INTO journal (task_id, seq, type, data, checksum, created_at) VALUES (?, ?, ?, ?, ?, ?)',
  );
  const createdAt = new Date(now).toISOString();
  let seq = last?.seq ?? 0;
  let prev = last?.checksum ?? '';
  const appended = entries.map((entry, i): JournalEntry => {
    seq++;
    const text = texts[i] ?? '{}';
    // Store and return exactly what was hashed, so a read-back verifies and equals the write.
    const data = JSON.parse(text) as typeof entry.data;
    const checksum = journalChecksumOfText(prev, seq, entry.type, text);
    insert.run(taskId, seq, entry.type, text, checksum, now);
    prev = checksum;
    return { taskId, seq, type: entry.type, data, checksum, createdAt } as JournalEntry;
  });
  // The view's summary moves on in the same transaction (ADR 0035).
  foldAppended(db, taskId, last, appended);
  return appended;
}

/**
 * Adds the entries to the task's journal totals (`journal_bytes`, `journal_entries`: one row, no scan), or throws
 * JOURNAL_LIMIT when they would take the journal over `limits` (the caller's transaction then writes nothing).
 */
function countEntries(
  db: Database.Database,
  taskId: string,
  texts: readonly string[],
  limits: JournalLimits | undefined,
): void {
  const bytes = texts.reduce((sum, text) => sum + Buffer.byteLength(text), 0);
  if (limits?.maxBytes !== undefined || limits?.maxEntries !== undefined) {
    const used = prepared(db, 'SELECT journal_bytes, journal_entries FROM tasks WHERE id = ?').get(taskId) as
      { journal_bytes: number; journal_entries: number } | undefined;
    checkJournalLimits(
      taskId,
      { bytes: used?.journal_bytes ?? 0, entries: used?.journal_entries ?? 0 },
      bytes,
      texts.length,
      limits,
    );
  }
  prepared(
    db,
    'UPDATE tasks SET journal_bytes = journal_bytes + ?, journal_entries = journal_entries + ? WHERE id = ?',
  ).run(bytes, texts.length, taskId);
}

/** Entries with seq > afterSeq (at most `limit`), chain-verified from the entry at afterSeq (or from seq 1). */
export function readVerifiedJournal(
  db: Database.Database,
  taskId: string,
  afterSeq: number,
  limit?: number,
): JournalEntry[] {
  const { rows, data } = readVerifiedChain(db, 'journal', taskId, afterSeq, limit);
  return rows.map((row, i) => toJournalEntry(taskId, row, data[i] ?? {}));
}

const TABLES = { journal: 'journal', audit: 'audit_log' } as const;

/**
 * One per-task hash chain (the journal or the audit log, which share a shape): rows after `afterSeq`, verified
 * from the checksum of the row at `afterSeq` (the caller verified it when it read it).
 */
export function readVerifiedChain(
  db: Database.Database,
  log: keyof typeof TABLES,
  taskId: string,
  afterSeq: number,
  limit = -1,
): { rows: Omit<JournalRow, 'task_id'>[]; data: Record<string, unknown>[] } {
  const table = TABLES[log];
  let prev = '';
  if (afterSeq > 0) {
    const anchor = prepared(db, `SELECT checksum FROM ${table} WHERE task_id = ? AND seq = ?`).get(
      taskId,
      afterSeq,
    ) as { checksum: string } | undefined;
    if (anchor === undefined) {
      const later = prepared(db, `SELECT 1 FROM ${table} WHERE task_id = ? AND seq > ?`).get(
        taskId,
        afterSeq,
      );
      if (later === undefined) return { rows: [], data: [] };
      const what = log === 'journal' ? 'Journal' : 'Audit log';
      throw new CodecallError('CHECKPOINT_CORRUPT', `${what} of task ${taskId} is missing seq ${afterSeq}`, {
        details: { taskId, seq: afterSeq, log },
      });
    }
    prev = anchor.checksum;
  }
  // Only the columns the entries need (not the task id on every row): the read is most of a resume's store time.
  const rows = prepared(
    db,
    `SELECT seq, type, data, checksum, created_at FROM ${table} WHERE task_id = ? AND seq > ? ORDER BY seq LIMIT ?`,
  ).all(taskId, afterSeq, limit) as Omit<JournalRow, 'task_id'>[];
  return { rows, data: verifyJournal(taskId, rows, afterSeq + 1, prev, log) };
}

/** Most entries one budgeted page looks at the sizes of. */
const PAGE_SIZES_SCAN = 10_000;

/**
 * How many entries after `afterSeq` fit in `maxBytes` of data (at least one), and whether more follow. The sizes
 * come from the rows' headers (`octet_length` reads no data), so a page of big entries is found without reading
 * them.
 */
export function entriesWithin(
  db: Database.Database,
  taskId: string,
  page: { afterSeq: number; limit?: number; maxBytes: number },
): { count: number; more: boolean } {
  const scan = Math.min(page.limit ?? PAGE_SIZES_SCAN, PAGE_SIZES_SCAN) + 1;
  const sizes = prepared(
    db,
    'SELECT octet_length(data) AS bytes FROM journal WHERE task_id = ? AND seq > ? ORDER BY seq LIMIT ?',
  ).all(taskId, page.afterSeq, scan) as { bytes: number }[];
  let count = 0;
  let bytes = 0;
  for (const row of sizes) {
    bytes += row.bytes;
    if (count > 0 && bytes > page.maxBytes) break;
    if (page.limit !== undefined && count >= page.limit) break;
    count++;
  }
  return { count, more: sizes.length > count };
}
