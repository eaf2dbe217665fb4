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

/** A task's journal for a view, or the task as corrupt when its chain is broken. */
export async function readJournalForView(
  store: Pick<TaskStore, 'readJournal'>,
  record: TaskRecord,
  options: { signal?: AbortSignal } = {},
): Promise<JournalEntry[] | CorruptTask> {
  try {
    return await store.readJournal(record.id, options);
  } catch (e) {
    const corrupt = corruptTaskOf(e, record);
    if (corrupt === null) throw e;
    return corrupt;
  }
}
