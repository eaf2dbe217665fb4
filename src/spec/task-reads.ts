import { corruptTaskOf } from './corrupt-task.ts';
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
 * A task's whole journal, read in pages of at most JOURNAL_PAGE_BYTES with a turn of the event loop between
 * them: a big journal makes the read long, never the loop's pauses (the store reads synchronously).
 */
export async function readJournalPaged(
  store: Pick<TaskStore, 'readJournalPage'>,
  taskId: string,
  options: { signal?: AbortSignal } = {},
): Promise<JournalEntry[]> {
  const entries: JournalEntry[] = [];
  for (;;) {
    const afterSeq = entries.at(-1)?.seq ?? 0;
    const page = await store.readJournalPage(taskId, { ...options, afterSeq, maxBytes: JOURNAL_PAGE_BYTES });
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
