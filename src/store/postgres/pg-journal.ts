import { CodecallError } from '../../errors/index.ts';
import {
  EMPTY_JOURNAL_SUMMARY,
  journalEntryProblem,
  parseJournalSummary,
  summarizeJournal,
} from '../../spec/index.ts';
import type { JournalEntry, JournalEntryInput, JournalLimits, JournalSummary } from '../../spec/index.ts';
import { canonicalJson, journalChecksumOfText } from '../journal-checksum.ts';
import { toJournalEntry } from '../rows.ts';
import type { JournalRow } from '../rows.ts';
import { verifyJournal } from '../verify-journal.ts';
import { all, one } from './pg-sql.ts';
import type { Sql } from './pg-sql.ts';

type Head = { seq: number; checksum: string } | undefined;

function noTask(taskId: string): CodecallError {
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

/** One appendJournal call as the append queue batches it. */
export interface AppendCall {
  readonly entries: readonly JournalEntryInput[];
  readonly fencingToken?: number | undefined;
  readonly limits?: JournalLimits | undefined;
  readonly now: number;
}

export type AppendOutcome = { readonly entries: JournalEntry[] } | { readonly error: unknown };

/**
 * Appends the calls' entries after the task's last one, in call order, inside the caller's transaction: one row
 * lock, one insert and one summary fold for them all (the group commit of a task's appends). The task row is
 * locked first (FOR UPDATE), which orders appends and claims of one task across nodes. A call that is malformed,
 * FENCED or over its limits fails alone and writes nothing; the database also refuses an entry that does not
 * chain or whose token is not the task's.
 */
export async function appendCalls(
  sql: Sql,
  taskId: string,
  calls: readonly AppendCall[],
): Promise<AppendOutcome[]> {
  const row = await one<{ fencing_token: number; journal_bytes: number; journal_entries: number }>(
    sql,
    'SELECT fencing_token, journal_bytes, journal_entries FROM tasks WHERE id = $1 FOR UPDATE',
    [taskId],
  );
  if (row === undefined) return calls.map(() => ({ error: noTask(taskId) }));
  const last = await journalHead(sql, taskId);
  let seq = last?.seq ?? 0;
  let prev = last?.checksum ?? '';
  const used = { journal_bytes: row.journal_bytes, journal_entries: row.journal_entries };
  const appended: JournalEntry[] = [];
  const texts: string[] = [];
  const times: number[] = [];
  const outcomes = calls.map((call): AppendOutcome => {
    try {
      if (call.fencingToken !== undefined && row.fencing_token !== call.fencingToken) {
        throw fencedError(taskId, call.fencingToken, row.fencing_token);
      }
      const callTexts = call.entries.map((entry) => entryText(taskId, entry));
      const bytes = callTexts.reduce((sum, text) => sum + Buffer.byteLength(text), 0);
      checkLimits(taskId, used, bytes, callTexts.length, call.limits);
      used.journal_bytes += bytes;
      used.journal_entries += callTexts.length;
      const createdAt = new Date(call.now).toISOString();
      const entries = call.entries.map((entry, i): JournalEntry => {
        seq++;
        const text = callTexts[i] ?? '{}';
        const checksum = journalChecksumOfText(prev, seq, entry.type, text);
        prev = checksum;
        texts.push(text);
        times.push(call.now);
        const data = JSON.parse(text) as typeof entry.data;
        return { taskId, seq, type: entry.type, data, checksum, createdAt } as JournalEntry;
      });
      appended.push(...entries);
      return { entries };
    } catch (error) {
      return { error };
    }
  });
  if (appended.length === 0) return outcomes;
  await sql.query('UPDATE tasks SET journal_bytes = $2, journal_entries = $3 WHERE id = $1', [
    taskId,
    used.journal_bytes,
    used.journal_entries,
  ]);
  await sql.query(
    `INSERT INTO journal (task_id, seq, type, checksum, created_at, fencing_token, data)
     SELECT $1, s, t, c, w, $2, d FROM unnest($3::int[], $4::text[], $5::text[], $6::bigint[], $7::text[]) AS u(s, t, c, w, d)`,
    [
      taskId,
      row.fencing_token,
      appended.map((e) => e.seq),
      appended.map((e) => e.type),
      appended.map((e) => e.checksum),
      times,
      texts,
    ],
  );
  await foldAppended(sql, taskId, last, appended);
  return outcomes;
}

/** What would not parse when read back is not written (a task with it could never run again). */
function entryText(taskId: string, entry: JournalEntryInput): string {
  const problem = journalEntryProblem(entry.type, entry.data);
  if (problem !== null) {
    throw new CodecallError('INVALID_ARGUMENT', `Journal entry is malformed: ${problem}`, {
      details: { taskId, type: entry.type },
    });
  }
  return canonicalJson(entry.data);
}

/** One call's appends (task creation, an update's entries), its error thrown. */
export async function appendEntries(
  sql: Sql,
  taskId: string,
  entries: readonly JournalEntryInput[],
  now: number,
  options: { fencingToken?: number; limits?: JournalLimits | undefined } = {},
): Promise<JournalEntry[]> {
  const [outcome] = await appendCalls(sql, taskId, [{ entries, now, ...options }]);
  if (outcome === undefined) return [];
  if ('error' in outcome) throw outcome.error;
  return outcome.entries;
}

function checkLimits(
  taskId: string,
  used: { journal_bytes: number; journal_entries: number },
  bytes: number,
  count: number,
  limits: JournalLimits | undefined,
): void {
  const { maxBytes, maxEntries } = limits ?? {};
  if (maxBytes !== undefined && used.journal_bytes + bytes > maxBytes) {
    throw new CodecallError(
      'JOURNAL_LIMIT',
      `the journal of task ${taskId} holds ${used.journal_bytes} bytes; ${bytes} more would take it over its limit of ${maxBytes}`,
      { details: { task_id: taskId, bytes: used.journal_bytes, adding: bytes, max_bytes: maxBytes } },
    );
  }
  if (maxEntries !== undefined && used.journal_entries + count > maxEntries) {
    throw new CodecallError(
      'JOURNAL_LIMIT',
      `the journal of task ${taskId} holds ${used.journal_entries} entries; ${count} more would take it over its limit of ${maxEntries}`,
      { details: { task_id: taskId, entries: used.journal_entries, adding: count, max_entries: maxEntries } },
    );
  }
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

function summaryAt(row: SummaryRow | undefined, head: Head): JournalSummary | null {
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

/** Folds appended entries into the task's summary in the append's transaction (ADR 0035). */
async function foldAppended(
  sql: Sql,
  taskId: string,
  before: Head,
  appended: readonly JournalEntry[],
): Promise<void> {
  const row = await summaryRow(sql, taskId);
  const from = before === undefined ? EMPTY_JOURNAL_SUMMARY : summaryAt(row, before);
  if (from === null) {
    if (row !== undefined) await sql.query('DELETE FROM journal_summaries WHERE task_id = $1', [taskId]);
    return;
  }
  await writeSummary(sql, taskId, summarizeJournal(appended, from));
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
