import { toCodecallError } from '../errors/index.ts';
import type { JournalEntryInput } from '../spec/index.ts';

interface Queued {
  readonly entries: readonly JournalEntryInput[];
  /** Deferred entries start no append: they go with the next commit's. */
  readonly deferred: boolean;
  resolve(): void;
  reject(error: Error): void;
}

const nextTask = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Appends run one after another, in the order commit() was called, so outcomes are journaled in the order they
 * are delivered. Entries queued while an append is in flight go together in the next one; each caller settles
 * when the append holding its entries does.
 *
 * Deferred entries (calls taken over from an earlier attempt, ADR 0034) start no append: they are written, in
 * queue order, at the front of the next commit's append (or `flush()`'s). Their callers settle without waiting for
 * it, but never before a commit queued ahead of them, so deliveries keep journal order. A failed append that held
 * deferred entries cannot be made good (their values were delivered): the queue refuses everything after it and
 * reports the failure once (`onLost`).
 */
export class CommitQueue {
  private readonly queued: Queued[] = [];
  private appending = false;
  /** Settles when the last commit queued so far has settled: deferred callers wait for it. */
  private lastCommit: Promise<void> = Promise.resolve();
  private lost: Error | undefined;

  constructor(
    private readonly append: (entries: readonly JournalEntryInput[]) => Promise<void>,
    private readonly onLost?: (error: Error) => void,
  ) {}

  commit(entries: readonly JournalEntryInput[]): Promise<void> {
    if (this.lost) return Promise.reject(this.lost);
    const committed = new Promise<void>((resolve, reject) => {
      this.queued.push({ entries, deferred: false, resolve, reject });
      if (!this.appending) void this.appendQueued();
    });
    this.lastCommit = committed.then(
      () => undefined,
      () => undefined,
    );
    return committed;
  }

  /**
   * Queues entries for the next commit without starting an append. Settles in a later task once every commit
   * queued before has settled (or earlier, with the append that takes them); rejects if that append fails.
   */
  defer(entries: readonly JournalEntryInput[]): Promise<void> {
    if (this.lost) return Promise.reject(this.lost);
    return new Promise<void>((resolve, reject) => {
      // Whichever comes first settles it (the later task, or the append that takes the entries).
      this.queued.push({ entries, deferred: true, resolve, reject });
      void this.lastCommit.then(nextTask).then(() => resolve());
    });
  }

  /** Whether deferred entries wait for the next commit. */
  get holdsDeferred(): boolean {
    return this.queued.some((c) => c.deferred && c.entries.length > 0);
  }

  /** Makes every entry queued so far durable (deferred ones included); rejects if any of them was lost. */
  flush(): Promise<void> {
    if (this.lost) return Promise.reject(this.lost);
    if (!this.appending && this.queued.length === 0) return Promise.resolve();
    return this.commit([]).then(() => {
      if (this.lost) throw this.lost;
    });
  }

  private async appendQueued(): Promise<void> {
    this.appending = true;
    await Promise.resolve(); // the commits of this same turn join the first append
    // Deferred entries left alone wait for the next commit.
    while (this.queued.some((c) => !c.deferred)) {
      const batch = this.queued.splice(0);
      const entries = batch.flatMap((c) => c.entries);
      try {
        if (entries.length > 0) await this.append(entries);
        for (const c of batch) c.resolve();
      } catch (error) {
        const failure = error instanceof Error ? error : toCodecallError(error, 'STORE_ERROR');
        if (!this.lost && batch.some((c) => c.deferred && c.entries.length > 0)) this.fail(failure);
        for (const c of batch) c.reject(failure);
      }
    }
    this.appending = false;
  }

  private fail(failure: Error): void {
    this.lost = failure;
    for (const c of this.queued.splice(0)) c.reject(failure);
    this.onLost?.(failure);
  }
}
