import { CodecallError } from '../../errors/index.ts';
import { EMPTY_JOURNAL_SUMMARY, journalEntryProblem, summarizeJournal } from '../../spec/index.ts';
import type { JournalEntry, JournalEntryInput, JournalLimits, JournalSummary } from '../../spec/index.ts';
import { canonicalJson, journalChecksumOfText } from '../journal-checksum.ts';
import { checkJournalLimits } from '../journal-limits.ts';
import { fencedError, noTask, summaryAt } from './pg-journal.ts';
import { oneNamed } from './pg-sql.ts';
import type { Sql } from './pg-sql.ts';

/** One appendJournal call as the append queue batches it. */
export interface AppendCall {
  readonly entries: readonly JournalEntryInput[];
  readonly fencingToken?: number | undefined;
  readonly limits?: JournalLimits | undefined;
  readonly now: number;
}

export type AppendOutcome = { readonly entries: JournalEntry[] } | { readonly error: unknown };

/**
 * What an append needs to know of its task: its token, journal totals and head, and its summary when that is of
 * the head (null: none kept). Read under the row lock (the slow path), or remembered by the lease holder from its
 * last append (the fast path, ADR 0042), where the database's checks catch a memory gone stale.
 */
export interface AppendState {
  readonly fencingToken: number;
  readonly bytes: number;
  readonly entries: number;
  readonly seq: number;
  readonly checksum: string;
  readonly summary: JournalSummary | null;
}

interface Plan {
  readonly outcomes: AppendOutcome[];
  readonly appended: JournalEntry[];
  readonly texts: string[];
  readonly times: number[];
  readonly after: AppendState;
}

/** Which calls go in and with which seqs and checksums, from a state: pure, so both paths share it. */
function planAppend(taskId: string, calls: readonly AppendCall[], state: AppendState): Plan {
  let { seq, checksum: prev, bytes: usedBytes, entries: usedEntries } = state;
  const appended: JournalEntry[] = [];
  const texts: string[] = [];
  const times: number[] = [];
  const outcomes = calls.map((call): AppendOutcome => {
    try {
      if (call.fencingToken !== undefined && state.fencingToken !== call.fencingToken) {
        throw fencedError(taskId, call.fencingToken, state.fencingToken);
      }
      const callTexts = call.entries.map((entry) => entryText(taskId, entry));
      const bytes = callTexts.reduce((sum, text) => sum + Buffer.byteLength(text), 0);
      checkJournalLimits(
        taskId,
        { bytes: usedBytes, entries: usedEntries },
        bytes,
        callTexts.length,
        call.limits,
      );
      usedBytes += bytes;
      usedEntries += callTexts.length;
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
  const summary =
    state.summary === null || appended.length === 0
      ? state.summary
      : summarizeJournal(appended, state.summary);
  return {
    outcomes,
    appended,
    texts,
    times,
    after: {
      fencingToken: state.fencingToken,
      bytes: usedBytes,
      entries: usedEntries,
      seq,
      checksum: prev,
      summary,
    },
  };
}

const rowsOf = (taskId: string, plan: Plan): unknown[] => [
  taskId,
  plan.appended.map((e) => e.seq),
  plan.appended.map((e) => e.type),
  plan.appended.map((e) => e.checksum),
  plan.times,
  plan.texts,
];

/** The task's row locked, with its journal's head and its summary row: all an append reads, in one statement. */
const STATE = `SELECT t.fencing_token, c.journal_bytes, c.journal_entries, h.seq AS head_seq, h.checksum AS head_checksum,
    s.seq AS summary_seq, s.checksum AS summary_checksum, s.summary
  FROM tasks AS t
  JOIN task_changes AS c ON c.task_id = t.id
  LEFT JOIN LATERAL (SELECT seq, checksum FROM journal WHERE task_id = t.id ORDER BY seq DESC LIMIT 1) AS h ON true
  LEFT JOIN journal_summaries AS s ON s.task_id = t.id
  WHERE t.id = $1 FOR UPDATE OF t`;

interface StateRow {
  fencing_token: number;
  journal_bytes: number;
  journal_entries: number;
  head_seq: number | null;
  head_checksum: string | null;
  summary_seq: number | null;
  summary_checksum: string | null;
  summary: string | null;
}

/**
 * The slow path, inside the caller's transaction: the task row locked first (FOR UPDATE, which orders appends and
 * claims of one task across nodes) and its state read in one statement, the calls planned, then one statement
 * that writes totals, entries and summary. Returns the state after it (for the fast path of the next append), or
 * null when the task is gone.
 */
export async function appendCalls(
  sql: Sql,
  taskId: string,
  calls: readonly AppendCall[],
): Promise<{ outcomes: AppendOutcome[]; after: AppendState | null }> {
  const row = await oneNamed<StateRow>(sql, STATE, [taskId]);
  if (row === undefined) return { outcomes: calls.map(() => ({ error: noTask(taskId) })), after: null };
  const head = row.head_seq === null ? undefined : { seq: row.head_seq, checksum: row.head_checksum ?? '' };
  const stored =
    row.summary === null
      ? undefined
      : { seq: row.summary_seq ?? 0, checksum: row.summary_checksum ?? '', summary: row.summary };
  const state: AppendState = {
    fencingToken: row.fencing_token,
    bytes: row.journal_bytes,
    entries: row.journal_entries,
    seq: head?.seq ?? 0,
    checksum: head?.checksum ?? '',
    // As the fold (ADR 0035): an empty journal starts from the empty summary; else only a summary of the head goes on.
    summary: head === undefined ? EMPTY_JOURNAL_SUMMARY : summaryAt(stored, head),
  };
  const plan = planAppend(taskId, calls, state);
  if (plan.appended.length === 0) return { outcomes: plan.outcomes, after: state };
  // The summary goes on from the one of the head, or a stale one is dropped (its first reader folds it again).
  const summary = plan.after.summary;
  const op: SummaryOp = summary !== null ? 'upsert' : stored !== undefined ? 'delete' : 'none';
  const written = await writePlan(sql, taskId, plan, state, op);
  if (written.t !== 1)
    throw new CodecallError('STORE_ERROR', `the append to task ${taskId} lost its row lock`);
  return { outcomes: plan.outcomes, after: plan.after };
}

type SummaryOp = 'guarded' | 'upsert' | 'delete' | 'none';

const SUMMARY_WRITES: Record<SummaryOp, string> = {
  guarded: `UPDATE journal_summaries SET seq = $11, checksum = $12, summary = $13
       WHERE task_id = $1 AND seq = $14 AND checksum = $15 AND EXISTS (SELECT 1 FROM t) RETURNING 1`,
  upsert: `INSERT INTO journal_summaries (task_id, seq, checksum, summary)
       SELECT $1, $11, $12, $13 WHERE EXISTS (SELECT 1 FROM t)
       ON CONFLICT (task_id) DO UPDATE SET seq = excluded.seq, checksum = excluded.checksum, summary = excluded.summary
       RETURNING 1`,
  delete: 'DELETE FROM journal_summaries WHERE task_id = $1 AND EXISTS (SELECT 1 FROM t) RETURNING 1',
  none: 'SELECT 1 WHERE false',
};

const writeStatement = (op: SummaryOp): string =>
  `WITH k AS (
       SELECT 1 FROM tasks WHERE id = $1 AND fencing_token = $9 FOR SHARE
     ), t AS (
       UPDATE task_changes SET journal_bytes = $7, journal_entries = $8,
         change_xid = pg_current_xact_id()::text::bigint, change_seq = nextval('change_seq_counter')
       WHERE task_id = $1 AND journal_entries = $10 AND EXISTS (SELECT 1 FROM k) RETURNING 1
     ), j AS (
       INSERT INTO journal (task_id, seq, type, checksum, created_at, fencing_token, data)
       SELECT $1, s, ty, c, w, $9, d FROM unnest($2::int[], $3::text[], $4::text[], $5::bigint[], $6::text[])
         AS u(s, ty, c, w, d) WHERE EXISTS (SELECT 1 FROM t)
       RETURNING 1
     ), s AS (${SUMMARY_WRITES[op]})
     SELECT (SELECT count(*) FROM t) AS t, (SELECT count(*) FROM s) AS s`;

/** The append statements by summary write, built once (not a 1 KB text built and hashed again per append). */
const WRITES = Object.fromEntries(
  (Object.keys(SUMMARY_WRITES) as SummaryOp[]).map((op) => [op, writeStatement(op)]),
) as Record<SummaryOp, string>;

/**
 * Totals, entries and summary in one statement, the totals moved only under the expected token and entry count
 * (the entries insert only with them). The totals live beside the task's change stamp (schema step 5), which they
 * move together; the share lock on the task's row makes a claim's new token wait for the append, or the append
 * see it. The summary: `guarded` moves it only from the remembered one (the fast
 * path), `upsert` writes it (the slow path, which read it under the row lock), `delete` drops a stale one.
 */
async function writePlan(
  sql: Sql,
  taskId: string,
  plan: Plan,
  state: AppendState,
  op: SummaryOp,
): Promise<{ t: number; s: number }> {
  const summary = plan.after.summary;
  const values: unknown[] = [
    ...rowsOf(taskId, plan),
    plan.after.bytes,
    plan.after.entries,
    state.fencingToken,
    state.entries,
  ];
  const text = summary === null ? null : JSON.stringify(summary);
  if (op === 'guarded' || op === 'upsert') values.push(summary?.seq ?? 0, summary?.checksum ?? '', text);
  if (op === 'guarded') values.push(state.seq, state.checksum);
  const result = await oneNamed<{ t: number; s: number }>(sql, WRITES[op], values);
  return result ?? { t: 0, s: 0 };
}

/**
 * The fast path (ADR 0042): the calls planned from the state the lease holder remembers, written in one statement
 * (one round trip, committed on its own): the task's totals moved only under the expected fencing token, the
 * entries inserted (the database checks each one chains to the one before and carries the task's token), the
 * summary moved only from the one remembered. Null when the memory was stale or a call needs the slow path's
 * answer (a stale token, the task gone): nothing was written, the caller goes the slow way.
 */
export async function appendFast(
  sql: Sql,
  taskId: string,
  calls: readonly AppendCall[],
  state: AppendState,
): Promise<{ outcomes: AppendOutcome[]; after: AppendState } | null> {
  if (calls.some((c) => c.fencingToken !== undefined && c.fencingToken !== state.fencingToken)) return null;
  const plan = planAppend(taskId, calls, state);
  if (plan.appended.length === 0) return null;
  const summary = plan.after.summary;
  let result;
  try {
    result = await writePlan(sql, taskId, plan, state, summary === null ? 'none' : 'guarded');
  } catch (error) {
    // A chain that does not follow (the memory was stale) is the slow path's to redo; anything else is an error.
    if ((error as { code?: unknown }).code === 'CC422') return null;
    throw error;
  }
  if (result.t !== 1) return null;
  const kept = summary !== null && result.s === 1 ? summary : null;
  return { outcomes: plan.outcomes, after: { ...plan.after, summary: kept } };
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
  const { outcomes } = await appendCalls(sql, taskId, [{ entries, now, ...options }]);
  const [outcome] = outcomes;
  if (outcome === undefined) return [];
  if ('error' in outcome) throw outcome.error;
  return outcome.entries;
}
