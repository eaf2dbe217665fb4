import type Database from 'better-sqlite3';
import { CodecallError } from '../../errors/index.ts';
import { toStoreError } from './sqlite-errors.ts';

interface Pending {
  readonly signal: AbortSignal | undefined;
  /** Writes (inside the batch transaction); returns what settles the caller once the batch has committed. */
  readonly apply: () => () => void;
  readonly reject: (error: CodecallError) => void;
}

/**
 * Group commit: writes queued in the same event-loop turn (and until the scheduled flush runs) are committed in
 * ONE `BEGIN IMMEDIATE` transaction, so one fsync covers them all. Each write runs in a savepoint of its own,
 * so one that throws (FENCED, NOT_FOUND, ...) is undone and rejected alone; a write's promise resolves only after
 * the COMMIT returned. If the transaction itself fails (SQLITE_BUSY, a disk error), every write in it rejects.
 */
export class GroupCommit {
  #queue: Pending[] = [];
  #scheduled = false;
  readonly #db: Database.Database;
  /** Called inside an open transaction, it runs `fn` in a savepoint (better-sqlite3 nests that way). */
  readonly #inSavepoint: (fn: () => () => void) => () => void;
  readonly #inTransaction: (batch: readonly Pending[]) => Outcome[];

  readonly #onError: ((error: unknown) => void) | undefined;

  /** `onError` sees every SQLite error a batch or a write in it met (the store's health counts them). */
  constructor(db: Database.Database, options: { onError?: (error: unknown) => void } = {}) {
    this.#db = db;
    this.#onError = options.onError;
    this.#inSavepoint = db.transaction((fn: () => () => void) => fn());
    const batchTransaction = db.transaction((batch: readonly Pending[]) =>
      batch.map((p) => this.#attempt(p)),
    );
    this.#inTransaction = (batch) => batchTransaction.immediate(batch);
  }

  /** Queues `write` for the next batch; resolves with its result once that batch is committed. */
  enqueue<T>(write: () => T, signal?: AbortSignal): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({
        signal,
        apply: () => {
          const value = write();
          return () => resolve(value);
        },
        reject,
      });
      if (!this.#scheduled) {
        this.#scheduled = true;
        // setImmediate, not a microtask: it runs after this whole event-loop turn, so appends caused by other
        // I/O of the same turn (tool results from sandbox workers, other tasks) join the batch (ADR 0009).
        setImmediate(() => {
          this.#scheduled = false;
          this.flush();
        });
      }
    });
  }

  /** Commits everything queued now, synchronously (also before other store operations and on close). */
  flush(): void {
    if (this.#queue.length === 0) return;
    const batch = this.#queue.splice(0).filter((p) => {
      if (!p.signal?.aborted) return true;
      p.reject(new CodecallError('ABORTED', 'The store operation was aborted'));
      return false;
    });
    if (batch.length === 0) return;
    let outcomes: Outcome[];
    try {
      outcomes = this.#inTransaction(batch);
    } catch (error) {
      this.#onError?.(error);
      const storeError = toStoreError(error);
      for (const p of batch) p.reject(storeError);
      return;
    }
    outcomes.forEach((outcome, i) => {
      if (outcome.ok) outcome.settle();
      else batch[i]?.reject(outcome.error);
    });
  }

  #attempt(p: Pending): Outcome {
    try {
      return { ok: true, settle: this.#inSavepoint(p.apply) };
    } catch (error) {
      // Some errors (SQLITE_FULL, SQLITE_IOERR, ...) make SQLite roll the whole transaction back: then the
      // writes before this one are gone too, and the batch fails as a whole.
      if (!this.#db.inTransaction) throw error;
      this.#onError?.(error);
      return { ok: false, error: toStoreError(error) };
    }
  }
}

type Outcome = { ok: true; settle: () => void } | { ok: false; error: CodecallError };
