import { CodecallError } from '../errors/index.ts';
import { corruptTaskOf } from './corrupt-task.ts';
import { EMPTY_JOURNAL_SUMMARY, summarizeJournal, summaryRows } from './journal-summary.ts';
import type { JournalSummary } from './journal-summary.ts';
import { lightEntry } from './light-row.ts';
import type { CorruptTask } from './corrupt-task.ts';
import type { JournalEntry } from './journal.ts';
import type { TaskRecord } from './task.ts';
import type { TaskStore } from './task-store.ts';

// How readers (views, lists, inboxes, streams) read a task: a corrupt one comes back as a CorruptTask to flag,
// not as an error that would fail everything read with it.

/** The task for a view or a list: its record, or what is known of it when its row is corrupt; null if none. */
export async function readTaskForView(
  store: Pick<TaskStore, 'getTask'>,
  taskId: string,
  options: { signal?: AbortSignal } = {},
): Promise<TaskRecord | CorruptTask | null> {
  try {
    return await store.getTask(taskId, options);
  } catch (e) {
    const corrupt = corruptTaskOf(e);
    if (corrupt === null) throw e;
    return corrupt;
  }
}

/** How much entry data one read of a paged journal takes (ADR 0029): a few ms of the event loop. */
export const JOURNAL_PAGE_BYTES = 1024 * 1024;

/**
 * A task's whole journal (or its entries after `afterSeq`, chain-verified from the stored checksum at `afterSeq`),
 * read in pages of at most JOURNAL_PAGE_BYTES with a turn of the event loop between them: a big journal makes the
 * read long, never the loop's pauses (the store reads synchronously).
 */
export async function readJournalPaged(
  store: Pick<TaskStore, 'readJournalPage'>,
  taskId: string,
  options: { signal?: AbortSignal; afterSeq?: number } = {},
): Promise<JournalEntry[]> {
  const { afterSeq: from = 0, ...rest } = options;
  const entries: JournalEntry[] = [];
  for (;;) {
    const afterSeq = entries.at(-1)?.seq ?? from;
    const page = await store.readJournalPage(taskId, { ...rest, afterSeq, maxBytes: JOURNAL_PAGE_BYTES });
    for (const entry of page.entries) entries.push(entry);
    if (!page.more || page.entries.length === 0) return entries;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** A task's journal for a view (read in pages), or the task as corrupt when its chain is broken. */
export async function readJournalForView(
  store: Pick<TaskStore, 'readJournalPage'>,
  record: TaskRecord,
  options: { signal?: AbortSignal } = {},
): Promise<JournalEntry[] | CorruptTask> {
  try {
    return await readJournalPaged(store, record.id, options);
  } catch (e) {
    const corrupt = corruptTaskOf(e, record);
    if (corrupt === null) throw e;
    return corrupt;
  }
}

/** What a view reads of a task's journal (ADR 0035): its summary and the rows it shows, verified. */
export interface ViewJournal {
  readonly summary: JournalSummary;
  /** The rows `summaryRows` names, by seq, each verified against the checksum of the row before it. */
  readonly rows: ReadonlyMap<number, JournalEntry>;
}

/** The store methods a view's read of a journal uses. */
export type SummaryReader = Pick<
  TaskStore,
  'readJournalSummary' | 'saveJournalSummary' | 'readJournal' | 'readJournalPage'
>;

/**
 * A task's journal as a view reads it: the store's summary (rebuilt from the verified journal, in pages, and kept
 * when the store has none that matches the journal's head), then the rows `summaryRows` names (its first two and
 * its last unless big, the pending requests, the attention pause) read one by one and each verified against its predecessor's checksum;
 * a row that is not what the summary says it is makes the task corrupt like a broken chain. The task as corrupt
 * when anything read fails its check.
 */
export async function readSummaryForView(
  store: SummaryReader,
  record: TaskRecord,
  options: { signal?: AbortSignal } = {},
): Promise<ViewJournal | CorruptTask> {
  try {
    const summary =
      (await store.readJournalSummary(record.id, options)) ??
      (await rebuildSummary(store, record.id, options));
    const rows = new Map<number, JournalEntry>();
    const seqs = summaryRows(summary);
    for (const seq of seqs) {
      const [row] = await store.readJournal(record.id, { ...options, afterSeq: seq - 1, limit: 1 });
      if (row?.seq !== seq) throw summaryMismatch(record.id, seq, 'entry missing');
      rows.set(seq, row);
      if (rows.size > 3) await new Promise((resolve) => setImmediate(resolve));
    }
    checkRows(record.id, summary, rows);
    // Big requests and offers are shown as the summary keeps them, not read (ADR 0036).
    for (const k of [...summary.approvals, ...summary.notRepeated]) {
      if (k.light) rows.set(k.seq, lightEntry(record.id, k.seq, k.light));
    }
    return { summary, rows };
  } catch (e) {
    const corrupt = corruptTaskOf(e, record);
    if (corrupt === null) throw e;
    return corrupt;
  }
}

/** Folds the journal (read in pages, verified) into a summary and asks the store to keep it. */
async function rebuildSummary(
  store: SummaryReader,
  taskId: string,
  options: { signal?: AbortSignal },
): Promise<JournalSummary> {
  let summary = EMPTY_JOURNAL_SUMMARY;
  for (let attempt = 0; ; attempt++) {
    for (;;) {
      const page = await store.readJournalPage(taskId, {
        ...options,
        afterSeq: summary.seq,
        maxBytes: JOURNAL_PAGE_BYTES,
      });
      summary = summarizeJournal(page.entries, summary);
      if (!page.more || page.entries.length === 0) break;
      await new Promise((resolve) => setImmediate(resolve));
    }
    // Entries appended while it was read: fold them too (a busy task may never be caught; its view is still right).
    if ((await store.saveJournalSummary(taskId, summary, options)) || attempt >= 3) return summary;
  }
}

function checkRows(taskId: string, summary: JournalSummary, rows: ReadonlyMap<number, JournalEntry>): void {
  const head = rows.get(summary.seq);
  if (head !== undefined && head.checksum !== summary.checksum) {
    throw summaryMismatch(taskId, summary.seq, 'not the entry its summary was folded to');
  }
  for (const a of summary.approvals) {
    if (a.light) continue;
    const row = rows.get(a.seq);
    if (row?.type !== 'approval_request' || row.data.approval_id !== a.id) {
      throw summaryMismatch(taskId, a.seq, `not the request of approval ${a.id}`);
    }
  }
  for (const i of summary.inputs) {
    const row = rows.get(i.seq);
    if (row?.type !== 'input_request' || row.data.call_id !== i.callId) {
      throw summaryMismatch(taskId, i.seq, `not the input request of call ${i.callId}`);
    }
  }
  if (summary.attention !== null) {
    const row = rows.get(summary.attention.seq);
    if (row?.type !== 'control' || row.data.action !== 'needs_attention') {
      throw summaryMismatch(taskId, summary.attention.seq, 'not a needs_attention pause');
    }
  }
}

function summaryMismatch(taskId: string, seq: number, why: string): CodecallError {
  return new CodecallError(
    'CHECKPOINT_CORRUPT',
    `Journal of task ${taskId} is corrupt at seq ${seq}: ${why}`,
    { details: { taskId, seq, log: 'journal' } },
  );
}
