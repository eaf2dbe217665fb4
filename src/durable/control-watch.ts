import { intervalMs } from '../spec/index.ts';
import type { ControlRequest, TaskStore } from '../spec/index.ts';

/** How often a runner asks the store for pause/cancel requests made by other processes. */
export const DEFAULT_CONTROL_POLL_MS = 50;
/** The control poll of a store that tells of requests itself (`TaskStore.watch`): a safety net only. */
const WATCHED_CONTROL_POLL_MS = 1000;

export interface ControlWatchOptions {
  readonly store: TaskStore;
  /** The runner's lease owner: requests for its runs. */
  readonly owner: string;
  readonly pollMs?: number | undefined;
  /** Whether this runner runs the task now. */
  has(taskId: string): boolean;
  /** How many runs it has: none, and the watch stops. */
  running(): number;
  act(taskId: string, action: ControlRequest): void;
}

/**
 * Pause and cancel requests for a runner's runs made by other processes: heard from the store as they come where
 * it tells of them (PostgreSQL's LISTEN), and polled (rarely then: a hint can be lost). Runs only while the
 * runner has runs.
 */
export class ControlWatch {
  private poll: NodeJS.Timeout | undefined;
  private unwatch: (() => void) | undefined;

  constructor(private readonly o: ControlWatchOptions) {}

  start(): void {
    if (this.poll) return;
    const { store } = this.o;
    const watch = store.watch?.bind(store);
    this.unwatch = watch?.((signal) => {
      if (signal.kind !== 'control' || !this.o.has(signal.taskId)) return;
      if (signal.owner !== null && signal.owner !== this.o.owner) return;
      this.o.act(signal.taskId, signal.action);
    });
    const every = this.o.pollMs ?? DEFAULT_CONTROL_POLL_MS;
    this.poll = setInterval(
      () => {
        if (this.o.running() === 0) {
          clearInterval(this.poll);
          this.poll = undefined;
          this.unwatch?.();
          this.unwatch = undefined;
          return;
        }
        store.listControlRequests(this.o.owner).then(
          (requests) => {
            for (const r of requests) this.o.act(r.taskId, r.action);
          },
          () => undefined, // a closed or busy store: the next poll tries again
        );
      },
      intervalMs(watch ? Math.max(every, WATCHED_CONTROL_POLL_MS) : every),
    );
    this.poll.unref();
  }
}
