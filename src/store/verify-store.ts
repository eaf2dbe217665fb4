import { isCodecallError } from '../errors/index.ts';
import { canonicalJson } from '../codec/index.ts';
import { summarizeJournal } from '../spec/index.ts';
import type { JournalEntry, TaskRecord, TaskStore } from '../spec/index.ts';
import { listedInputColumn } from './listed-input-column.ts';

/** The first broken link of one task's log. */
export interface BrokenLink {
  readonly taskId: string;
  /**
   * `task`: the task's row itself cannot be decoded, or its list form (`listed_input`) is not its input's (seq 0);
   * `summary`: the stored journal summary is not the journal's (what views and the inbox show).
   */
  readonly log: 'journal' | 'audit' | 'task' | 'summary';
  readonly seq: number;
  readonly message: string;
}

export interface StoreIntegrity {
  readonly tasks: number;
  readonly journalEntries: number;
  readonly auditEntries: number;
  readonly broken: readonly BrokenLink[];
}

const PAGE = 1000;

/**
 * Verifies every task's row, and its journal and audit log chains from seq 1. A chain cannot show that its tail was cut off,
 * so each audit `status` link's `journal_seq` (the journal's length at that change) is checked against the
 * journal too: one pointing past its end means journal entries were removed.
 */
export async function verifyStore(
  store: TaskStore,
  options: { signal?: AbortSignal } = {},
): Promise<StoreIntegrity> {
  const { signal } = options;
  const broken: BrokenLink[] = [];
  let tasks = 0;
  let journalEntries = 0;
  let auditEntries = 0;
  let cursor: string | null = null;
  do {
    const page: Awaited<ReturnType<TaskStore['listTasks']>> = await store.listTasks(
      { limit: PAGE, ...(cursor === null ? {} : { cursor }) },
      { signal },
    );
    // A row that cannot be decoded is a finding too; its logs are checked like any other's.
    for (const c of page.corrupt ?? [])
      broken.push({ taskId: c.taskId, log: 'task', seq: 0, message: c.message });
    // The same page as lists read it: the list form written with each task, checked against its input.
    const listed = await store.listTasks(
      { limit: PAGE, summarised: true, ...(cursor === null ? {} : { cursor }) },
      { signal },
    );
    const listedById = new Map(listed.tasks.map((t) => [t.id, t]));
    for (const task of page.tasks) {
      const problem = listedFormProblem(task, listedById.get(task.id));
      if (problem !== null) broken.push({ taskId: task.id, log: 'task', seq: 0, message: problem });
    }
    for (const task of [...page.tasks, ...(page.corrupt ?? []).map((c) => ({ id: c.taskId }))]) {
      signal?.throwIfAborted();
      tasks++;
      let journalLength: number | null = null;
      try {
        const journal = await store.readJournal(task.id, { signal });
        journalEntries += journal.length;
        journalLength = journal.at(-1)?.seq ?? 0;
        const summary = await summaryProblem(store, task.id, journal, signal);
        if (summary !== null) broken.push(summary);
      } catch (e) {
        broken.push(brokenLink(task.id, 'journal', e));
      }
      try {
        const audit = await store.readAudit(task.id, { signal });
        auditEntries += audit.length;
        const length = journalLength;
        const past =
          length === null
            ? undefined
            : audit.find((a) => a.type === 'status' && Number(a.data.journal_seq) > length);
        if (past !== undefined && length !== null) {
          broken.push({
            taskId: task.id,
            log: 'journal',
            seq: length + 1,
            message:
              `Journal of task ${task.id} ends at seq ${length} but audit seq ${past.seq} ` +
              `recorded it at seq ${String(past.data.journal_seq)}: entries were removed`,
          });
        }
      } catch (e) {
        broken.push(brokenLink(task.id, 'audit', e));
      }
    }
    cursor = page.nextCursor;
  } while (cursor !== null);
  return { tasks, journalEntries, auditEntries, broken };
}

function brokenLink(taskId: string, log: 'journal' | 'audit', e: unknown): BrokenLink {
  // Only a broken chain is a finding; a closed store or an abort is the caller's error.
  if (!isCodecallError(e) || e.code !== 'CHECKPOINT_CORRUPT') throw e;
  const seq = typeof e.details.seq === 'number' ? e.details.seq : 0;
  return { taskId, log: e.details.log === 'audit' ? 'audit' : log, seq, message: e.message };
}

/**
 * Derived data is checked by deriving it again: a list form that is not its input's would show a list another
 * program than the task runs (the input itself is covered by the chains).
 */
function listedFormProblem(task: TaskRecord, listed: TaskRecord | undefined): string | null {
  if (listed === undefined) return null;
  const expected = listedInputColumn(task.input);
  const stored =
    listed.listedInput === undefined
      ? null
      : canonicalJson({ input: listed.input, listed: listed.listedInput });
  const derived = expected === null ? null : canonicalJson(JSON.parse(expected));
  if (stored === derived) return null;
  return stored === null
    ? `the list form of task ${task.id} (listed_input) was removed: its input is big enough to have one`
    : `the list form of task ${task.id} (listed_input) is not its input's (edited)`;
}

/** The stored journal summary (views, the approval inbox) against the journal folded again, when one is stored. */
async function summaryProblem(
  store: TaskStore,
  taskId: string,
  journal: readonly JournalEntry[],
  signal: AbortSignal | undefined,
): Promise<BrokenLink | null> {
  const stored = await store.readJournalSummary(taskId, { signal });
  if (stored === null || canonicalJson(stored) === canonicalJson(summarizeJournal(journal))) return null;
  return {
    taskId,
    log: 'summary',
    seq: stored.seq,
    message: `the journal summary of task ${taskId} is not its journal's (edited): views and the approval inbox would show what the journal does not hold`,
  };
}
