import { isCodecallError } from '../errors/index.ts';
import { readJournalPaged } from '../spec/index.ts';
import type { JournalEntry, TaskStore } from '../spec/index.ts';
import type { KeptJournal } from './paused-vms.ts';

/** How a run's journal was read: whole, or the kept journal with the entries from its mark on (ADR 0056). */
export type JournalRead = 'whole' | 'tail' | 'moved';

/**
 * The task's journal for a run. With a journal kept with a paused VM, only the entries from the mark's seq on
 * are read (verified from the stored checksum before it): when the entry there is still the mark's (same
 * checksum, which chains everything before it), the journal is the kept entries followed by the ones after the
 * mark. Otherwise (the journal moved: rewritten, or its chain broken from the mark on) it is read whole, verified
 * from seq 1, as without a kept journal; a broken chain is CHECKPOINT_CORRUPT then.
 */
export async function readRunJournal(
  store: Pick<TaskStore, 'readJournalPage'>,
  taskId: string,
  kept: KeptJournal | undefined,
): Promise<{ readonly journal: JournalEntry[]; readonly read: JournalRead }> {
  if (kept) {
    const { seq, checksum } = kept.mark;
    const tail = await readJournalPaged(store, taskId, { afterSeq: seq - 1 }).catch((e: unknown) => {
      if (isCodecallError(e) && e.code === 'CHECKPOINT_CORRUPT') return null;
      throw e;
    });
    const at = tail?.[0];
    if (tail && at?.seq === seq && at.checksum === checksum) {
      const journal = kept.entries.slice();
      for (let i = 1; i < tail.length; i++) journal.push(tail[i] as JournalEntry);
      return { journal, read: 'tail' };
    }
    return { journal: await readJournalPaged(store, taskId), read: 'moved' };
  }
  return { journal: await readJournalPaged(store, taskId), read: 'whole' };
}
