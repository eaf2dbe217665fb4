import { isCodecallError } from '../errors/index.ts';
import type { TaskStore } from '../spec/index.ts';

/** The first broken link of one task's log. */
export interface BrokenLink {
  readonly taskId: string;
  /** `task`: the task's row itself cannot be decoded (seq 0). */
  readonly log: 'journal' | 'audit' | 'task';
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
    for (const task of [...page.tasks, ...(page.corrupt ?? []).map((c) => ({ id: c.taskId }))]) {
      signal?.throwIfAborted();
      tasks++;
      let journalLength: number | null = null;
      try {
        const journal = await store.readJournal(task.id, { signal });
        journalEntries += journal.length;
        journalLength = journal.at(-1)?.seq ?? 0;
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
