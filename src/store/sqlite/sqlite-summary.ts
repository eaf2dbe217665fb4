import type Database from 'better-sqlite3';
import { CodecallError } from '../../errors/index.ts';
import { EMPTY_JOURNAL_SUMMARY, parseJournalSummary, summarizeJournal } from '../../spec/index.ts';
import type { JournalEntry, JournalSummary } from '../../spec/index.ts';
import { prepared } from './statement-cache.ts';

// A task's journal summary (ADR 0035): one row per task, folded in the append's transaction, checked against the
// journal's head whenever it is read.

interface SummaryRow {
  readonly seq: number;
  readonly checksum: string;
  readonly summary: string;
}

/** The journal's last entry, or undefined for an empty journal (one indexed row). */
export function journalHead(
  db: Database.Database,
  taskId: string,
): { seq: number; checksum: string } | undefined {
  return prepared(db, 'SELECT seq, checksum FROM journal WHERE task_id = ? ORDER BY seq DESC LIMIT 1').get(
    taskId,
  ) as { seq: number; checksum: string } | undefined;
}

function summaryRow(db: Database.Database, taskId: string): SummaryRow | undefined {
  return prepared(db, 'SELECT seq, checksum, summary FROM journal_summaries WHERE task_id = ?').get(
    taskId,
  ) as SummaryRow | undefined;
}

/** The stored summary when it is of this head (and parses as the current format), else null. */
function summaryAt(
  row: SummaryRow | undefined,
  head: { seq: number; checksum: string } | undefined,
): JournalSummary | null {
  if (row === undefined) return null;
  if (row.seq !== (head?.seq ?? 0) || row.checksum !== (head?.checksum ?? '')) return null;
  const summary = parseJournalSummary(row.summary);
  if (summary === null || summary.seq !== row.seq || summary.checksum !== row.checksum) return null;
  return summary;
}

function writeSummary(db: Database.Database, taskId: string, summary: JournalSummary): void {
  prepared(
    db,
    `INSERT INTO journal_summaries (task_id, seq, checksum, summary) VALUES (?, ?, ?, ?)
     ON CONFLICT (task_id) DO UPDATE SET seq = excluded.seq, checksum = excluded.checksum, summary = excluded.summary`,
  ).run(taskId, summary.seq, summary.checksum, JSON.stringify(summary));
}

/**
 * Folds appended entries into the task's summary, in the append's transaction. `before` is the journal's head
 * before them. A task without a summary of that head (journaled before summaries were kept) keeps none: its first
 * reader folds the journal once and saves it.
 */
export function foldAppended(
  db: Database.Database,
  taskId: string,
  before: { seq: number; checksum: string } | undefined,
  appended: readonly JournalEntry[],
): void {
  const row = summaryRow(db, taskId);
  const from = before === undefined ? EMPTY_JOURNAL_SUMMARY : summaryAt(row, before);
  if (from === null) {
    if (row !== undefined) prepared(db, 'DELETE FROM journal_summaries WHERE task_id = ?').run(taskId);
    return;
  }
  writeSummary(db, taskId, summarizeJournal(appended, from));
}

function mustExist(db: Database.Database, taskId: string): void {
  if (prepared(db, 'SELECT 1 FROM tasks WHERE id = ?').get(taskId) === undefined) {
    throw new CodecallError('NOT_FOUND', `No task ${taskId}`, { details: { taskId } });
  }
}

/** TaskStore.readJournalSummary: the stored summary if it is of the journal's head now, else null. */
export function readSummary(db: Database.Database, taskId: string): JournalSummary | null {
  mustExist(db, taskId);
  return summaryAt(summaryRow(db, taskId), journalHead(db, taskId));
}

/** TaskStore.saveJournalSummary: kept if it is of the journal's head now. */
export function saveSummary(db: Database.Database, taskId: string, summary: JournalSummary): boolean {
  mustExist(db, taskId);
  const head = journalHead(db, taskId);
  if (summary.seq !== (head?.seq ?? 0) || summary.checksum !== (head?.checksum ?? '')) return false;
  writeSummary(db, taskId, summary);
  return true;
}
