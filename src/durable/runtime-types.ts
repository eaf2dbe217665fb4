import type { ExecutionLimits, GuestLanguage, SandboxDriver, TaskStatus, TaskStore } from '../spec/index.ts';
import type { ApprovalDecision, AttentionDecision } from './paused-actions.ts';
import type { RuntimeEvent } from './runtime-event.ts';
import type { RunnerTools } from './task-runner.ts';
import type { TaskView } from './task-view.ts';

export interface RuntimeOptions {
  readonly store: TaskStore;
  /** Empty for a runtime that only steers tasks (a CLI command that runs nothing). */
  readonly drivers: readonly SandboxDriver[];
  readonly tools: RunnerTools;
  /** Identifies this runtime in leases (default: `runtime-<pid>-<random>`). */
  readonly owner?: string;
  /** Tasks run at once by `start()`'s loop. */
  readonly concurrency?: number;
  readonly leaseMs?: number;
  readonly pollMs?: number;
  readonly acceptChangedTools?: boolean;
  readonly maxStalledAttempts?: number;
  readonly clock?: () => number;
  /** Hooks for what the events do not show (metrics); see RuntimeObserver. */
  readonly observer?: RuntimeObserver;
}

/** Tiny hooks into the runtime for metrics; an observer's failure is its own. */
export interface RuntimeObserver {
  /**
   * A pause or resume was asked for (`pause()`, `resume()`); `accepted` settles when the runtime has taken it
   * (the task paused, or queued to run again) and rejects when it was refused.
   */
  readonly controlRequested?: (
    taskId: string,
    action: 'pause' | 'resume',
    accepted: Promise<unknown>,
  ) => void;
}

export interface SubmitInput {
  readonly code: string;
  readonly language?: GuestLanguage;
  readonly seed?: number;
  readonly limits?: Partial<ExecutionLimits>;
  readonly tools?: readonly string[];
  readonly metadata?: Readonly<Record<string, unknown>>;
  readonly id?: string;
}

export interface ActorOptions {
  /** Who acts (journaled with the action). */
  readonly actor?: string;
  readonly reason?: string;
}

export interface Runtime {
  /** With `idempotency`, the same key and request give back the task the first call created. */
  submit(
    input: SubmitInput,
    options?: { idempotency?: { readonly key: string; readonly requestHash: string } },
  ): Promise<TaskView>;
  get(taskId: string): Promise<TaskView | null>;
  list(filter?: {
    status?: TaskStatus;
    limit?: number;
    cursor?: string;
  }): Promise<{ tasks: TaskView[]; next_cursor: string | null }>;
  /** Runs this task here until it ends or pauses (without `start()`; e.g. a CLI). */
  run(taskId: string, options?: { signal?: AbortSignal }): Promise<TaskView>;
  /** Resolves once the task is paused or has ended (`until: 'terminal'`: once it has ended). */
  wait(taskId: string, options?: { until?: 'settled' | 'terminal'; signal?: AbortSignal }): Promise<TaskView>;
  pause(taskId: string, options?: ActorOptions): Promise<TaskView>;
  resume(taskId: string, options?: ActorOptions & { force?: boolean }): Promise<TaskView>;
  cancel(taskId: string, options?: ActorOptions): Promise<TaskView>;
  decide(taskId: string, decisions: readonly ApprovalDecision[], options?: ActorOptions): Promise<TaskView>;
  provideInput(taskId: string, name: string, value: unknown, options?: ActorOptions): Promise<TaskView>;
  resolveAttention(taskId: string, decision: AttentionDecision, options?: ActorOptions): Promise<TaskView>;
  /** Events of one task ('*' for all); returns the unsubscribe function. */
  subscribe(taskId: string, listener: (event: RuntimeEvent) => void): () => void;
  /** Starts the loop that claims runnable tasks (pending, recovered, woken) up to `concurrency`. */
  start(): void;
  /**
   * Stops claiming and waits for the running tasks: with `pauseRunning` they pause (`shutdown`) at once, with
   * `timeoutMs` those still running then do; they resume on the next start.
   */
  close(options?: { pauseRunning?: boolean; timeoutMs?: number }): Promise<void>;
}
