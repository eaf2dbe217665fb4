import type { NetworkAccess } from './egress.ts';
import type { ExecutionLimits, GuestLanguage, LogEntry } from './sandbox.ts';
import type { ListedInput } from './listed-input.ts';
import type { TaskBudgets } from './budget-types.ts';
import type { TraceContext } from './trace-context.ts';
import type { JsonSchema } from './json-schema.ts';

export type TaskStatus = 'pending' | 'running' | 'paused' | 'succeeded' | 'failed' | 'cancelled';

export type PauseReason =
  'user_request' | 'approval_required' | 'awaiting_input' | 'needs_attention' | 'shutdown';

export const TERMINAL_STATUSES: readonly TaskStatus[] = ['succeeded', 'failed', 'cancelled'];

/** What may happen to a task; TASK_TRANSITIONS maps (status, event) to the next status. */
export type TaskEvent = 'start' | 'pause' | 'resume' | 'succeed' | 'fail' | 'cancel' | 'recover' | 'retry';

/**
 * The one transition table. Status changes are patches (TaskStore.updateTask), and the store checks each against
 * this table (store/status-change.ts): a change with no event here is refused with ILLEGAL_TRANSITION. `recover` is
 * a worker picking up a task whose lease expired (it was `running` when its worker died); `retry` queues a task
 * again after a failure of the infrastructure (not of its program), after a backoff (`runAfter`).
 */
export const TASK_TRANSITIONS: Readonly<Record<TaskStatus, Partial<Record<TaskEvent, TaskStatus>>>> = {
  pending: { start: 'running', pause: 'paused', cancel: 'cancelled', fail: 'failed' },
  running: {
    pause: 'paused',
    succeed: 'succeeded',
    fail: 'failed',
    cancel: 'cancelled',
    recover: 'running',
    retry: 'pending',
  },
  paused: { resume: 'pending', cancel: 'cancelled', fail: 'failed' },
  succeeded: {},
  failed: {},
  cancelled: {},
};

/** The first event leading from `from` to `to`, or null when the table has none. */
export function eventBetween(from: TaskStatus, to: TaskStatus): TaskEvent | null {
  for (const [event, next] of Object.entries(TASK_TRANSITIONS[from])) {
    if (next === to) return event as TaskEvent;
  }
  return null;
}

export function isTerminal(status: TaskStatus): boolean {
  return TERMINAL_STATUSES.includes(status);
}

/** What a program may reach beyond its limits; drivers enforce what applies to them (quickjs has no imports,
 * processes or network at all). */
export interface TaskConstraints {
  /** Top-level modules the program may import (Python); undefined means the driver's default. */
  readonly allowedLibraries?: readonly string[];
  /** Executables the program may not start (Python). */
  readonly blockedCommands?: readonly string[];
  /** Whether the program may start processes at all (Python); off by default. */
  readonly allowSubprocesses?: boolean;
  /** Where the program's `fetch` may go (issue 21); absent or false: nowhere (the sandbox has no network). */
  readonly networkAccess?: NetworkAccess | false;
  /** Budgets of the task's tool calls (ADR 0044): over all its calls, and per tool (tightening the tool's own). */
  readonly budgets?: TaskBudgets;
}

/** A file given with a task: it is in the program's working directory when the program starts. */
export interface TaskFile {
  /** Relative path in the working directory. */
  readonly name: string;
  /** The bytes, base64. */
  readonly data: string;
}

/** What every task input has, whoever writes the program. */
interface TaskInputBase {
  readonly files?: readonly TaskFile[];
  readonly language: GuestLanguage;
  /** Seeds the guest's Math.random; fixed for the task's life so replays match. */
  readonly seed: number;
  readonly limits?: Partial<ExecutionLimits>;
  /** Names of the tools the task may use (`namespace.name`); undefined means all. */
  readonly tools?: readonly string[];
  readonly metadata?: Readonly<Record<string, unknown>>;
  readonly constraints?: TaskConstraints;
  /** The caller's trace context, kept with the task so a run claimed later (or elsewhere) joins its trace. */
  readonly traceContext?: TraceContext;
}

/** Exec mode: the caller supplies the program. */
export interface CodeTaskInput extends TaskInputBase {
  readonly kind: 'code';
  readonly code: string;
  /** The task this one revises (ADR 0034): the calls it completed are taken over, not run again. */
  readonly revisionOf?: string;
  /** With `revisionOf`: `read` and `idempotent` calls run again instead of being taken over. */
  readonly rerunReads?: boolean;
}

/** How an agent's model acts: by writing code (the default) or by JSON function calls. */
export type AgentMode = 'code' | 'function_calling';

export const AGENT_MODES: readonly AgentMode[] = ['code', 'function_calling'];

/** Agent mode: a model writes the program, step by step, from an instruction. */
export interface InstructionTaskInput extends TaskInputBase {
  readonly kind: 'instruction';
  readonly instruction: string;
  readonly mode: AgentMode;
  /** Model round trips the task may take. */
  readonly maxSteps: number;
  /** Failed steps in a row the model may try to fix before the task fails with the last error. */
  readonly maxStepRetries: number;
  /** The model to ask, when not the configured default. */
  readonly model?: string;
  /**
   * The final answer must be one JSON value of this schema (issue 23): sent to the model as its constraint form,
   * checked, and the task's result is the parsed value.
   */
  readonly answerSchema?: JsonSchema;
}

export type TaskInput = CodeTaskInput | InstructionTaskInput;

/** The text the task's `code_hash` is taken over: the program, or what the agent was asked to do. */
export function programSource(input: TaskInput): string {
  if (input.kind === 'code') return input.code;
  return JSON.stringify([
    input.instruction,
    input.mode,
    input.maxSteps,
    input.maxStepRetries,
    input.model ?? null,
    // Only when given: the hash of a task without one is what it was before the field existed.
    ...(input.answerSchema === undefined ? [] : [input.answerSchema]),
  ]);
}

export interface TaskError {
  readonly code: string;
  readonly message: string;
  /** The class of what the program threw (`TypeError`, `ValueError`): errors of the guest and of its tools. */
  readonly name?: string;
  /** Where the program failed, in the program as written (1-based), when the driver tells it. */
  readonly line?: number;
  readonly column?: number;
}

/** Resources a task used, summed over its runs (a replay re-runs the program, so it counts again). */
export interface TaskResources {
  /** Time the guest spent computing (inside the VM), over all runs. */
  readonly cpuMs: number;
  readonly wallMs: number;
  /** The largest heap any run reached. */
  readonly memoryBytes: number;
  readonly toolCalls: number;
}

/** The lease on a running task as a reader sees it (the fencing token stays with the holder). */
export interface TaskLease {
  readonly owner: string;
  readonly expiresAt: number | null;
}

/** A control action asked of a task running elsewhere; its runner polls for it. */
export type ControlRequest = 'pause' | 'cancel';

/** Where a task belongs and how the queue treats it; set at creation (the program itself is the `input`). */
export interface TaskAttributes {
  /** Owner of the task: only keys of this tenant (or an admin) see it. Default `default`. */
  readonly tenant: string;
  readonly sessionId: string | null;
  /** Higher runs first; FIFO within one priority. Default 0. */
  readonly priority: number;
  /** Where webhooks about the task go (a trigger fills the outbox in the status change's transaction). */
  readonly callbackUrl: string | null;
  /** Times a failure of the infrastructure (not of the program) is retried. Default 0. */
  readonly maxRetries: number;
  /** Epoch ms after which the task fails with DEADLINE_EXCEEDED instead of running on. */
  readonly deadlineAt: number | null;
}

export interface TaskRecord extends TaskAttributes {
  readonly id: string;
  /** The batch the task was submitted in. */
  readonly batchId: string | null;
  /** Infrastructure retries used so far. */
  readonly retries: number;
  /** Epoch ms before which a queued task is not claimed (a retry's backoff). */
  readonly runAfter: number | null;
  readonly status: TaskStatus;
  readonly pauseReason: PauseReason | null;
  readonly input: TaskInput;
  /**
   * Set only in a summarised list (`TaskFilter.summarised`): the input's fields named here were not read, `input`
   * holds their first characters (a string) or nothing (metadata), and these are their digests.
   */
  readonly listedInput?: ListedInput;
  /** Tagged JSON of the result (see codec/value-codec), once succeeded. */
  readonly result: string | null;
  readonly error: TaskError | null;
  /** The console output of the last run (a replay prints it all again), once the task has run. */
  readonly executionLog: readonly LogEntry[] | null;
  readonly resources: TaskResources | null;
  /** Set while a pause or cancel asked by another process waits for the task's runner. */
  readonly requestedAction: ControlRequest | null;
  /**
   * Who holds the lease of a `running` task and until when (epoch ms; null: released, claimable now). Absent for a
   * task that is not running and from stores that do not say.
   */
  readonly lease?: TaskLease;
  /** Epoch ms at which a paused task must be woken (an input wait timing out); null when never. */
  readonly wakeAt: number | null;
  /** Times a worker has claimed the task (crash-loop detection). */
  readonly attempts: number;
  /** Bumped by every update; optimistic concurrency for writers without a lease. */
  readonly version: number;
  readonly createdAt: string;
  readonly updatedAt: string;
}
