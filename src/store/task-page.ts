import { corruptTaskOf } from '../spec/index.ts';
import type { CorruptTask, TaskRecord } from '../spec/index.ts';
import { encodeCursor, toTaskRecord } from './rows.ts';
import type { TaskRow } from './rows.ts';

/**
 * A list's page from `limit + 1` rows read in its order: the records, the cursor of the next page when there is
 * one, and the rows that cannot be decoded flagged, not thrown (one bad row must not hide the rest of the page).
 */
export function taskPage(
  rows: readonly TaskRow[],
  limit: number,
): { tasks: TaskRecord[]; nextCursor: string | null; corrupt: CorruptTask[] } {
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  const tasks: TaskRecord[] = [];
  const corrupt: CorruptTask[] = [];
  for (const row of page) {
    try {
      tasks.push(toTaskRecord(row));
    } catch (e) {
      const c = corruptTaskOf(e);
      if (c === null) throw e;
      corrupt.push(c);
    }
  }
  return {
    tasks,
    nextCursor: rows.length > limit && last !== undefined ? encodeCursor(last) : null,
    corrupt,
  };
}
