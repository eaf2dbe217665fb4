import { CodecallError } from '../errors/index.ts';
import type { JournalLimits } from '../spec/index.ts';

/** JOURNAL_LIMIT when `bytes` more in `count` entries would take a journal holding `used` over `limits`. */
export function checkJournalLimits(
  taskId: string,
  used: { bytes: number; entries: number },
  bytes: number,
  count: number,
  limits: JournalLimits | undefined,
): void {
  const { maxBytes, maxEntries } = limits ?? {};
  if (maxBytes !== undefined && used.bytes + bytes > maxBytes) {
    throw new CodecallError(
      'JOURNAL_LIMIT',
      `the journal of task ${taskId} holds ${used.bytes} bytes; ${bytes} more would take it over its limit of ${maxBytes}`,
      { details: { task_id: taskId, bytes: used.bytes, adding: bytes, max_bytes: maxBytes } },
    );
  }
  if (maxEntries !== undefined && used.entries + count > maxEntries) {
    throw new CodecallError(
      'JOURNAL_LIMIT',
      `the journal of task ${taskId} holds ${used.entries} entries; ${count} more would take it over its limit of ${maxEntries}`,
      { details: { task_id: taskId, entries: used.entries, adding: count, max_entries: maxEntries } },
    );
  }
}
