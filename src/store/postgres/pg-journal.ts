import { CodecallError } from '../../errors/index.ts';
import { parseJournalSummary } from '../../spec/index.ts';
import type { JournalEntry, JournalSummary } from '../../spec/index.ts';
import { toJournalEntry } from '../rows.ts';
import type { JournalRow } from '../rows.ts';
import { verifyJournal } from '../verify-journal.ts';
import { all, one } from './pg-sql.ts';
import type { Sql } from './pg-sql.ts';

type Head = { seq: number; checksum: string } | undefined;

export function noTask(taskId: string): CodecallError {
  return new CodecallError('NOT_FOUND', `No task ${taskId}`, { details: { taskId } });
}

export function fencedError(taskId: string, fencingToken: number, currentToken: number): CodecallError {
  return new CodecallError('FENCED', `Fencing token ${fencingToken} is stale for task ${taskId}`, {
    details: { taskId, fencingToken, currentToken },
  });
}

/** The journal's last entry (one indexed row). */
export async function journalHead(sql: Sql, taskId: string): Promise<Head> {
  return one<{ seq: number; checksum: string }>(
    sql,
    'SELECT seq, checksum FROM journal WHERE task_id = $1 ORDER BY seq DESC LIMIT 1',
    [taskId],
  );
}

const TABLES = { journal: 'journal', audit: 'audit_log' } as const;

/** One per-task hash chain: rows after `afterSeq`, verified from the checksum of the row at `afterSeq`. */
export async function readVerifiedChain(
  sql: Sql,
  log: keyof typeof TABLES,
  taskId: string,
  afterSeq: number,
  limit?: number,
): Promise<{ rows: Omit<JournalRow, 'task_id'>[]; data: Record<string, unknown>[] }> {
  const table = TABLES[log];
  let prev = '';
  if (afterSeq > 0) {
    const anchor = await one<{ checksum: string }>(
      sql,
      `SELECT checksum FROM ${table} WHERE task_id = $1 AND seq = $2`,
      [taskId, afterSeq],
    );
    if (anchor === undefined) {
      const later = await one(sql, `SELECT 1 FROM ${table} WHERE task_id = $1 AND seq > $2 LIMIT 1`, [
        taskId,
        afterSeq,
      ]);
      if (later === undefined) return { rows: [], data: [] };
      const what = log === 'journal' ? 'Journal' : 'Audit log';
      throw new CodecallError('CHECKPOINT_CORRUPT', `${what} of task ${taskId} is missing seq ${afterSeq}`, {
        details: { taskId, seq: afterSeq, log },
      });
    }
    prev = anchor.checksum;
  }
  const rows = await all<Omit<JournalRow, 'task_id'>>(
    sql,
    `SELECT seq, type, data, checksum, created_at FROM ${table} WHERE task_id = $1 AND seq > $2 ORDER BY seq
     ${limit === undefined || limit < 0 ? '' : 'LIMIT $3'}`,
    limit === undefined || limit < 0 ? [taskId, afterSeq] : [taskId, afterSeq, limit],
  );
  return { rows, data: verifyJournal(taskId, rows, afterSeq + 1, prev, log) };
}

export async function readVerifiedJournal(
  sql: Sql,
  taskId: string,
  afterSeq: number,
  limit?: number,
): Promise<JournalEntry[]> {
  const { rows, data } = await readVerifiedChain(sql, 'journal', taskId, afterSeq, limit);
  return rows.map((row, i) => toJournalEntry(taskId, row, data[i] ?? {}));
}

const PAGE_SIZES_SCAN = 10_000;

/** How many entries after `afterSeq` fit in `maxBytes` of data (at least one), and whether more follow. */
export async function entriesWithin(
  sql: Sql,
  taskId: string,
  page: { afterSeq: number; limit?: number | undefined; maxBytes: number },
): Promise<{ count: number; more: boolean }> {
  const scan = Math.min(page.limit ?? PAGE_SIZES_SCAN, PAGE_SIZES_SCAN) + 1;
  // octet_length of a TOASTed value reads its header, not the value.
  const sizes = await all<{ bytes: number }>(
    sql,
    'SELECT octet_length(data) AS bytes FROM journal WHERE task_id = $1 AND seq > $2 ORDER BY seq LIMIT $3',
    [taskId, page.afterSeq, scan],
  );
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

interface SummaryRow {
  readonly seq: number;
  readonly checksum: string;
  readonly summary: string;
}

export function summaryAt(row: SummaryRow | undefined, head: Head): JournalSummary | null {
  if (row === undefined) return null;
  if (row.seq !== (head?.seq ?? 0) || row.checksum !== (head?.checksum ?? '')) return null;
  const summary = parseJournalSummary(row.summary);
  if (summary === null || summary.seq !== row.seq || summary.checksum !== row.checksum) return null;
  return summary;
}

async function summaryRow(sql: Sql, taskId: string): Promise<SummaryRow | undefined> {
  return one<SummaryRow>(sql, 'SELECT seq, checksum, summary FROM journal_summaries WHERE task_id = $1', [
    taskId,
  ]);
}

async function writeSummary(sql: Sql, taskId: string, summary: JournalSummary): Promise<void> {
  await sql.query(
    `INSERT INTO journal_summaries (task_id, seq, checksum, summary) VALUES ($1, $2, $3, $4)
     ON CONFLICT (task_id) DO UPDATE SET seq = excluded.seq, checksum = excluded.checksum, summary = excluded.summary`,
    [taskId, summary.seq, summary.checksum, JSON.stringify(summary)],
  );
}

async function mustExist(sql: Sql, taskId: string): Promise<void> {
  if ((await one(sql, 'SELECT 1 FROM tasks WHERE id = $1', [taskId])) === undefined) throw noTask(taskId);
}

/** TaskStore.readJournalSummary. */
export async function readSummary(sql: Sql, taskId: string): Promise<JournalSummary | null> {
  await mustExist(sql, taskId);
  return summaryAt(await summaryRow(sql, taskId), await journalHead(sql, taskId));
}

/** TaskStore.saveJournalSummary: kept if it is of the journal's head now (the task row is locked for it). */
export async function saveSummary(sql: Sql, taskId: string, summary: JournalSummary): Promise<boolean> {
  if ((await one(sql, 'SELECT 1 FROM tasks WHERE id = $1 FOR UPDATE', [taskId])) === undefined)
    throw noTask(taskId);
  const head = await journalHead(sql, taskId);
  if (summary.seq !== (head?.seq ?? 0) || summary.checksum !== (head?.checksum ?? '')) return false;
  await writeSummary(sql, taskId, summary);
  return true;
}
