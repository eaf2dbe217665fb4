import type { RuntimeLoopFault } from '../api/index.ts';
import { CodecallError } from '../errors/index.ts';
import type { LongTimer, TaskRecord, TaskStore } from '../spec/index.ts';
import { intervalMs, longTimeout } from '../spec/index.ts';
import { failPastDeadline, resumeAfterShutdown, wakeDue } from './runtime-sweeps.ts';
import type { ApplyAction } from './runtime-sweeps.ts';
import type { TaskRunner } from './task-runner.ts';

export interface SchedulerOptions {
  readonly store: TaskStore;
  readonly runner: Pick<TaskRunner, 'startNext' | 'shutdown'>;
  /** Tasks run at once. */
  readonly concurrency: number;
  /** How often a started scheduler looks for work it was not told about. */
  readonly pollMs: number;
  readonly clock: () => number;
  /** One try at an action of the sweeps (a task changed meanwhile is seen again by the next sweep). */
  readonly apply: ApplyAction;
  /** Whether a lease owner is a process that died (its leases end at once); default: none is. */
  readonly ownerGone?: (owner: string) => boolean;
  /** Lines for the operator: the loop failing again and again, and its recovery. */
  readonly log?: (line: string) => void;
}

/** A fill that fails once is a busy store (the next poll tries again); this many in a row is a fault to report. */
const FAULT_AFTER = 2;
/** While the fault lasts, it is logged again this often (and whenever its message changes). */
const FAULT_REMIND_MS = 5 * 60_000;

/**
 * The runtime's loop: once started, fills free slots with runnable tasks whenever a task is submitted, ends or
 * pauses, and on every poll (which first wakes paused tasks that are due and fails those past their deadline).
 * It also knows every run of this runtime, started by the loop or by a caller (`track`), so close can wait.
 */
export class Scheduler {
  private readonly runs = new Map<string, Promise<TaskRecord | null>>();
  private started = false;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private unwatch: (() => void) | undefined;
  /** The fill in progress (claims under way), which close() waits for. */
  private filling: Promise<void> | undefined;
  /** Fills failed in a row, the first one's time, and when the fault was last logged. */
  private failed: {
    count: number;
    since: number;
    logged: number;
    message: string;
    code: string | null;
  } | null = null;

  constructor(private readonly options: SchedulerOptions) {}

  get closed(): boolean {
    return this.stopped;
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    this.timer = setInterval(() => this.kick(true), intervalMs(this.options.pollMs));
    // Work another process made claimable (a submit, a resume, a lease given up) is claimed when told, not at the poll.
    const { store } = this.options;
    this.unwatch = store.watch?.call(store, (signal) => {
      if (signal.kind === 'work') this.kick();
    });
    // The first sweep at once: a restarted server takes over its dead predecessor's tasks and the shutdown pauses.
    this.kick(true);
  }

  /** Counts a run of this runtime until it settles; a freed slot is filled again. */
  track(taskId: string, run: Promise<TaskRecord | null>): Promise<TaskRecord | null> {
    this.runs.set(taskId, run);
    const forget = (): void => {
      if (this.runs.get(taskId) === run) this.runs.delete(taskId);
      this.kick();
    };
    run.then(forget, forget);
    return run;
  }

  /** Settles when this runtime's run of the task (if any) has ended or paused. */
  async settled(taskId: string): Promise<void> {
    await this.runs.get(taskId);
  }

  /**
   * Fills free slots with runnable tasks; with `sweep`, first frees the leases of dead processes, resumes tasks
   * paused by a shutdown, fails paused tasks past their deadline and wakes those whose input wait timed out.
   */
  kick(sweep = false): void {
    if (!this.started || this.stopped) return;
    if (this.filling) return;
    const { store, clock, apply, runner, concurrency } = this.options;
    const fill = async (): Promise<void> => {
      try {
        if (sweep) {
          const { ownerGone } = this.options;
          // Neither holds back the claims below: a store busy now is asked again next poll.
          // Leases of processes of this machine that died end now: the claims below recover their tasks at once.
          if (ownerGone) await store.expireLeases(ownerGone).catch(() => undefined);
          await resumeAfterShutdown(store, apply, () => this.stopped).catch(() => undefined);
          await failPastDeadline(store, clock, apply);
          await wakeDue(store, clock, apply);
        }
        while (!this.stopped && this.runs.size < concurrency) {
          // Checked again once the sandboxes are ready: a runtime closed meanwhile claims nothing.
          const next = await runner.startNext({ shouldClaim: () => !this.stopped });
          if (!next) break;
          this.track(next.taskId, next.done).catch(() => undefined);
        }
        this.recovered();
      } catch (e) {
        // A busy or closing store: the next poll tries again; one that keeps failing is told (the loop goes on).
        if (!this.stopped) this.fillFailed(e);
      }
    };
    // Cleared in a callback, never inside fill(): a fill with every slot taken ends synchronously, and clearing
    // there would run before the assignment, leaving `filling` set for good (no task would be claimed again).
    const filling = fill().finally(() => {
      if (this.filling === filling) this.filling = undefined;
    });
    this.filling = filling;
  }

  /** The loop's fault while its fills keep failing (from the second in a row), else null. */
  fault(): RuntimeLoopFault | null {
    const f = this.failed;
    if (!f || f.count < FAULT_AFTER) return null;
    return { message: f.message, code: f.code, since: f.since, failures: f.count };
  }

  private fillFailed(e: unknown): void {
    const now = this.options.clock();
    const message = e instanceof Error ? e.message : String(e);
    const code = e instanceof CodecallError ? e.code : null;
    const prev = this.failed;
    const f = {
      count: (prev?.count ?? 0) + 1,
      since: prev?.since ?? now,
      logged: prev?.logged ?? 0,
      message,
      code,
    };
    this.failed = f;
    if (f.count < FAULT_AFTER) return;
    const changed = prev?.message !== message;
    if (f.count === FAULT_AFTER || changed || now - f.logged >= FAULT_REMIND_MS) {
      f.logged = now;
      this.options.log?.(
        `the runtime's loop cannot claim tasks (${String(f.count)} tries in a row since ` +
          `${new Date(f.since).toISOString()}): ${code ? `${code}: ` : ''}${message}; it tries again every poll`,
      );
    }
  }

  private recovered(): void {
    const f = this.failed;
    this.failed = null;
    if (f && f.count >= FAULT_AFTER) {
      this.options.log?.(`the runtime's loop claims tasks again, after ${String(f.count)} failed tries`);
    }
  }

  /** Stops claiming and waits for the runs; see Runtime.close. */
  async close(options: { pauseRunning?: boolean; timeoutMs?: number }): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    clearInterval(this.timer);
    this.unwatch?.();
    await this.filling;
    if (options.pauseRunning) this.options.runner.shutdown();
    const ended = Promise.allSettled([...this.runs.values()]);
    if (options.timeoutMs === undefined) {
      await ended;
      return;
    }
    // Tasks still running at the deadline pause (`shutdown`); any live runtime on the store resumes them.
    let timer: LongTimer | undefined;
    const late = await Promise.race([
      ended.then(() => false),
      new Promise<boolean>((resolve) => (timer = longTimeout(() => resolve(true), options.timeoutMs ?? 0))),
    ]);
    timer?.clear();
    if (late) {
      // Past its time the shutdown stops the calls still running too (a pause would let them finish).
      this.options.runner.shutdown({ stopCalls: true });
      await ended;
    }
  }
}
