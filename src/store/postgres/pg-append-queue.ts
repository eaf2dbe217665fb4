import { CodecallError } from '../../errors/index.ts';
import type { JournalEntry } from '../../spec/index.ts';
import type { AppendCall, AppendOutcome } from './pg-append.ts';

interface Waiting {
  readonly call: AppendCall;
  readonly signal: AbortSignal | undefined;
  readonly resolve: (entries: JournalEntry[]) => void;
  readonly reject: (error: unknown) => void;
}

/** Most calls one transaction commits together. */
const MAX_BATCH = 256;

/**
 * The appends of each task in call order, batched (ADR 0042): while one transaction of a task's appends runs, the
 * calls that arrive wait and then go together in the next, so a busy task stream pays one commit per batch, not
 * per call. A batch whose transaction fails runs again call by call, so one bad call fails alone.
 */
export class AppendQueue {
  readonly #waiting = new Map<string, Waiting[]>();
  readonly #commit: (taskId: string, calls: readonly AppendCall[]) => Promise<AppendOutcome[]>;

  constructor(commit: (taskId: string, calls: readonly AppendCall[]) => Promise<AppendOutcome[]>) {
    this.#commit = commit;
  }

  /** Queues a call; `drained` is the promise of the task's queue run when this call started one. */
  enqueue(
    taskId: string,
    call: AppendCall,
    signal: AbortSignal | undefined,
  ): { done: Promise<JournalEntry[]>; drained?: Promise<void> } {
    let waiting = this.#waiting.get(taskId);
    const start = waiting === undefined;
    if (waiting === undefined) {
      waiting = [];
      this.#waiting.set(taskId, waiting);
    }
    const list = waiting;
    const done = new Promise<JournalEntry[]>((resolve, reject) =>
      list.push({ call, signal, resolve, reject }),
    );
    return start ? { done, drained: this.#drain(taskId) } : { done };
  }

  async #drain(taskId: string): Promise<void> {
    // Let the calls of this event-loop turn join the first batch.
    await new Promise((resolve) => setImmediate(resolve));
    for (;;) {
      const waiting = this.#waiting.get(taskId) ?? [];
      if (waiting.length === 0) {
        this.#waiting.delete(taskId);
        return;
      }
      const batch = waiting.splice(0, MAX_BATCH).filter((w) => {
        if (!w.signal?.aborted) return true;
        w.reject(new CodecallError('ABORTED', 'The store operation was aborted'));
        return false;
      });
      if (batch.length === 0) continue;
      try {
        settle(
          batch,
          await this.#commit(
            taskId,
            batch.map((w) => w.call),
          ),
        );
      } catch (error) {
        if (batch.length === 1) {
          batch[0]?.reject(error);
          continue;
        }
        for (const w of batch) {
          try {
            settle([w], await this.#commit(taskId, [w.call]));
          } catch (e) {
            w.reject(e);
          }
        }
      }
    }
  }
}

function settle(batch: readonly Waiting[], outcomes: readonly AppendOutcome[]): void {
  batch.forEach((w, i) => {
    const outcome = outcomes[i];
    if (outcome === undefined) w.reject(new CodecallError('STORE_ERROR', 'append lost its outcome'));
    else if ('error' in outcome) w.reject(outcome.error);
    else w.resolve(outcome.entries);
  });
}
