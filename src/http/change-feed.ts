import type { TaskChange, TaskStore } from '../spec/index.ts';
import type { Runtime, RuntimeEvent } from '../api/index.ts';

/** How often the store is asked which tasks changed (by another process on the database). */
export const CHANGE_FEED_TICK_MS = 1000;

/** A runtime event of this process, or a change the store told of (made here or by another process). */
export type FeedEvent =
  RuntimeEvent | { readonly type: 'changed'; readonly taskId: string; readonly change: TaskChange };

/** What the feed did: read by tests (the store queries per tick do not grow with streams). */
export interface ChangeFeedStats {
  /** Ticks that asked the store. */
  ticks: number;
  /** Store queries (`readChanges`), the first cursor of a start included. */
  polls: number;
  /** Listeners now (open streams). */
  subscribers: number;
}

export interface ChangeFeedOptions {
  readonly tickMs?: number;
  /** Filled in as the feed runs, when given. */
  readonly stats?: ChangeFeedStats;
}

type Listener = (event: FeedEvent) => void;

/**
 * One change feed per server: every stream listens here instead of polling the store itself. Runtime events of
 * this process are fanned out at once; changes of other processes are found by one `readChanges` query per tick
 * for the whole process, whatever the number of streams, and told to the listeners of that task and of '*'. The
 * feed runs only while someone listens: no listener, no tick and no runtime subscription.
 */
export class ChangeFeed {
  readonly stats: ChangeFeedStats;
  private readonly listeners = new Map<string, Set<Listener>>();
  private count = 0;
  private offRuntime: (() => void) | null = null;
  private offStore: (() => void) | null = null;
  private again = false;
  private timer: NodeJS.Timeout | null = null;
  private cursor: number | null = null;
  /** The first cursor of the current start: listeners wait on it (`ready`) so no change is missed. */
  private starting: Promise<void> = Promise.resolve();
  private running: Promise<void> | null = null;
  /** Bumped at each stop: a query answered after a stop is dropped. */
  private epoch = 0;
  private closed = false;

  constructor(
    private readonly runtime: Pick<Runtime, 'subscribe'>,
    private readonly store: Pick<TaskStore, 'readChanges' | 'watch'>,
    private readonly options: ChangeFeedOptions = {},
  ) {
    this.stats = options.stats ?? { ticks: 0, polls: 0, subscribers: 0 };
  }

  /** Calls `listener` with the events of `taskId` ('*': every task); returns the release. */
  watch(taskId: string, listener: Listener): () => void {
    let set = this.listeners.get(taskId);
    if (!set) this.listeners.set(taskId, (set = new Set()));
    const mine = set;
    // One entry per watch, so the same function watched twice is released once per watch.
    const entry: Listener = (e) => listener(e);
    mine.add(entry);
    this.count += 1;
    this.stats.subscribers = this.count;
    if (this.count === 1) this.start();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      mine.delete(entry);
      if (mine.size === 0 && this.listeners.get(taskId) === mine) this.listeners.delete(taskId);
      this.count -= 1;
      this.stats.subscribers = this.count;
      if (this.count === 0) this.stop();
    };
  }

  /**
   * Settles once the store's cursor is known: a change committed after it is told by a later tick. A stream reads
   * its task (or its list) after this, so nothing made by another process falls between the two.
   */
  ready(): Promise<void> {
    return this.starting;
  }

  /** Stops the feed for good (the server closes). */
  close(): void {
    this.closed = true;
    this.stop();
  }

  private start(): void {
    if (this.closed) return;
    this.offRuntime = this.runtime.subscribe('*', (e) => this.emit(e.taskId, e));
    if (this.store.readChanges === undefined) return;
    this.starting = this.tick(false);
    this.timer = setInterval(() => void this.tick(true), this.options.tickMs ?? CHANGE_FEED_TICK_MS);
    this.timer.unref();
    // A store that tells of changes (PostgreSQL's LISTEN) is read when told; the tick stays as the safety net.
    this.offStore =
      this.store.watch?.((signal) => {
        if (signal.kind === 'changed') this.retick();
      }) ?? null;
  }

  /** A tick now; one asked while a tick runs follows it (the change may have come after its query). */
  private retick(): void {
    if (this.running === null) {
      void this.tick(true);
      return;
    }
    if (this.again) return;
    this.again = true;
    const epoch = this.epoch;
    void this.running.finally(() => {
      this.again = false;
      if (epoch === this.epoch) void this.tick(true);
    });
  }

  private stop(): void {
    this.epoch += 1;
    this.offRuntime?.();
    this.offRuntime = null;
    this.offStore?.();
    this.offStore = null;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.cursor = null;
    this.running = null;
    this.starting = Promise.resolve();
  }

  /** One store query: the first reads the cursor, each next one the tasks changed since. */
  private tick(counted: boolean): Promise<void> {
    const readChanges = this.store.readChanges?.bind(this.store);
    if (readChanges === undefined || this.count === 0) return Promise.resolve();
    if (this.running) return this.running;
    const epoch = this.epoch;
    const run = async (): Promise<void> => {
      if (counted && this.cursor !== null) this.stats.ticks += 1;
      this.stats.polls += 1;
      try {
        const answer = await readChanges({ after: this.cursor });
        if (epoch !== this.epoch) return;
        this.cursor = answer.cursor;
        for (const change of answer.changes) {
          this.emit(change.taskId, { type: 'changed', taskId: change.taskId, change });
        }
      } catch {
        // The store is unwell: the next tick asks again from the same cursor.
      }
    };
    const running = run().finally(() => {
      if (this.running === running) this.running = null;
    });
    this.running = running;
    return running;
  }

  private emit(taskId: string, event: FeedEvent): void {
    for (const key of [taskId, '*']) {
      for (const listener of [...(this.listeners.get(key) ?? [])]) {
        try {
          listener(event);
        } catch {
          // A listener's failure is its own.
        }
      }
    }
  }
}
