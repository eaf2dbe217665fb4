import { toCodecallError } from '../errors/index.ts';
import type { JournalEntryInput } from '../spec/index.ts';

/**
 * Appends run one after another, in the order commit() was called, so outcomes are journaled in the order they
 * are delivered. Entries queued while an append is in flight go together in the next one; each caller settles
 * when the append holding its entries does.
 */
export class CommitQueue {
  private readonly queued: {
    entries: readonly JournalEntryInput[];
    resolve: () => void;
    reject: (error: Error) => void;
  }[] = [];
  private appending = false;

  constructor(private readonly append: (entries: readonly JournalEntryInput[]) => Promise<void>) {}

  commit(entries: readonly JournalEntryInput[]): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queued.push({ entries, resolve, reject });
      if (!this.appending) void this.appendQueued();
    });
  }

  private async appendQueued(): Promise<void> {
    this.appending = true;
    await Promise.resolve(); // the commits of this same turn join the first append
    while (this.queued.length > 0) {
      const batch = this.queued.splice(0);
      try {
        await this.append(batch.flatMap((c) => c.entries));
        for (const c of batch) c.resolve();
      } catch (error) {
        const failure = error instanceof Error ? error : toCodecallError(error, 'STORE_ERROR');
        for (const c of batch) c.reject(failure);
      }
    }
    this.appending = false;
  }
}
