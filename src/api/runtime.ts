import type {
  TraceContext,
  ControlOf,
  JournalEntryData,
  ExecutionLimits,
  AgentMode,
  GuestLanguage,
  LogEntry,
  TaskConstraints,
  TaskFile,
  TaskRecord,
  TaskStatus,
  KeyRole,
} from '../spec/index.ts';
import type { BatchView, TaskListItem, TaskView } from './task-view.ts';
import type { ApprovalInbox } from './approval-inbox.ts';
import type { CorruptTaskItem } from './corrupt-item.ts';
import type { RuntimeEvent } from './runtime-event.ts';

export interface SubmitInput {
  /** The program (exec mode); exactly one of `code` and `instruction`. */
  readonly code?: string;
  /** What a model is to do (agent mode). */
  readonly instruction?: string;
  /** Agent mode: `code` (default) or `function_calling`. */
  readonly mode?: AgentMode;
  /** Agent mode: model round trips (1..100, default 20). */
  readonly maxSteps?: number;
  /** Agent mode: failed steps in a row the model may fix (0..10, default 3). */
  readonly maxStepRetries?: number;
  /** Agent mode: the model to ask instead of the configured one. */
  readonly model?: string;
  /**
   * Agent mode: the final answer must be one JSON value of this JSON Schema (sent to the model in its provider's
   * constraint form); the task's result is the parsed value. At most 64 KiB as JSON.
   */
  readonly answerSchema?: Readonly<Record<string, unknown>>;
  readonly language?: GuestLanguage;
  readonly seed?: number;
  readonly limits?: Partial<ExecutionLimits>;
  readonly tools?: readonly string[];
  readonly metadata?: Readonly<Record<string, unknown>>;
  readonly constraints?: TaskConstraints;
  /** Placed in the working directory (Python): `{ name, data }` with the bytes in base64. */
  readonly files?: readonly TaskFile[];
  readonly id?: string;
  /** Default `default`. */
  readonly tenant?: string;
  readonly sessionId?: string;
  /** Higher runs first (-100..100, default 0). */
  readonly priority?: number;
  readonly callbackUrl?: string;
  /** Retries of infrastructure failures (0..10, default 0). */
  readonly maxRetries?: number;
  /** Epoch ms after which the task fails with DEADLINE_EXCEEDED. */
  readonly deadlineAt?: number;
  /**
   * Instead of `deadlineAt`: seconds from submission, on the runtime's clock (so the `maxDeadlineSeconds` ceiling
   * holds exactly; the HTTP API's `deadline_seconds`).
   */
  readonly deadlineSeconds?: number;
  /**
   * The caller's W3C trace context (the HTTP API's `traceparent`/`tracestate` headers): kept with the task, the
   * parent of its run spans (ADR 0053).
   */
  readonly traceContext?: TraceContext;
}

/** A revision of an ended code task (ADR 0034): its program fixed; everything else is the task's. */
export interface ReviseInput {
  /** The revised program, in the task's language; checked as `submit` checks `code`. */
  readonly code: string;
  /** `read` and `idempotent` calls run again instead of being taken over (fresh values over reuse). */
  readonly rerunReads?: boolean;
  /** Keys that replace the revised task's metadata keys in the revision's (the CLI's remembered `--tools`). */
  readonly metadata?: Readonly<Record<string, unknown>>;
  /**
   * The reviser's W3C trace context (the HTTP API's `traceparent`/`tracestate`): the parent of the revision's run
   * spans. The revised task's own is not inherited: the revision is another request (ADR 0053).
   */
  readonly traceContext?: TraceContext;
}

/** What a creation may say besides its input: who creates, and a key that makes a repeat return the first. */
export interface CreateOptions {
  readonly idempotency?: { readonly key: string; readonly requestHash: string };
  readonly actor?: string;
}

/** Refuses a callback URL the service will not deliver to (throws WEBHOOK_TARGET_REFUSED naming `field`). */
export type CallbackCheck = (url: string, field: string) => void;

export interface ListFilter {
  readonly status?: TaskStatus;
  readonly tenant?: string;
  readonly sessionId?: string;
  readonly batchId?: string;
  readonly limit?: number;
  readonly cursor?: string;
  /** `oldest` first (the default) or `newest` first. */
  readonly order?: 'oldest' | 'newest';
}

export interface ActorOptions {
  /** Who acts (journaled with the action). */
  readonly actor?: string;
  readonly reason?: string;
}

/** Who decides approvals: the actor, and the role of the key it acts with (absent: in-process code, no key). */
export interface DeciderOptions extends ActorOptions {
  readonly role?: KeyRole;
}

export interface ApprovalDecision {
  readonly approvalId: string;
  readonly decision: 'approve' | 'reject';
  readonly reason?: string;
}

export interface AttentionDecision {
  /**
   * `retry` runs the call again; `skip` takes `result` as its outcome (both journaled as the human's decision);
   * `fail` ends the task (a control).
   */
  readonly action: JournalEntryData['attention_decision']['action'] | ControlOf<'fail'>['action'];
  /**
   * The call in doubt this decides (`retry` or `skip`); without it, a `retry` covers every call the task waits
   * on and a `skip` the first (`attention`: a result is one call's). The task runs on once every call in doubt is
   * decided.
   */
  readonly callId?: string;
  readonly result?: unknown;
  readonly reason?: string;
}

export interface Runtime {
  /** With `idempotency`, the same key and request give back the task the first call created. */
  submit(input: SubmitInput, options?: CreateOptions): Promise<TaskView>;
  /**
   * A new task that runs `input.code` in place of the ended (succeeded, failed, cancelled) code task `taskId`'s
   * program, with its language, seed, limits, tools, metadata, constraints, files, tenant, session, priority,
   * callback URL and retries (no deadline): the calls the task completed are taken over, not run again
   * (ADR 0034). NOT_FOUND without the task, INVALID_ARGUMENT for an instruction task (the agent revises its own
   * steps), ILLEGAL_TRANSITION while it has not ended (cancel it first). The new task's view.
   */
  revise(taskId: string, input: ReviseInput, options?: CreateOptions): Promise<TaskView>;
  /** Accepts every task or none (the first invalid one is INVALID_ARGUMENT naming `tasks[i].field`). */
  submitBatch(
    inputs: readonly SubmitInput[],
    options: { tenant?: string; callbackUrl?: string; actor?: string },
  ): Promise<BatchView>;
  getBatch(batchId: string): Promise<BatchView | null>;
  /** The task's view; one the store cannot read as written answers with `corrupt` set (not an error). */
  get(taskId: string): Promise<TaskView | null>;
  /**
   * A page of views. A task the store cannot read (its row, or a paused task's journal) is not in `tasks` but in
   * `corrupt`: one damaged task never fails the list.
   */
  list(
    filter?: ListFilter,
  ): Promise<{ tasks: TaskView[]; next_cursor: string | null; corrupt: CorruptTaskItem[] }>;
  /**
   * The view of a task read from the store: a paused one with what it waits for (its journal), others without;
   * one whose journal is broken has `corrupt` set.
   */
  view(record: TaskRecord): Promise<TaskView>;
  /**
   * A page as the service lists it (ADR 0029, 0036): each view's fields over 4 KiB summarised, and the tasks' big
   * inputs read as their digests, never whole: a page costs what it shows.
   */
  listItems(
    filter?: ListFilter,
  ): Promise<{ tasks: TaskListItem[]; next_cursor: string | null; corrupt: CorruptTaskItem[] }>;
  /** A task read from the store (a summarised record included) as a list shows it, or its corrupt item. */
  listItem(record: TaskRecord): Promise<{ task: TaskListItem } | { corrupt: CorruptTaskItem }>;
  /**
   * A page of the pending approvals of a tenant's paused tasks (without `tenant`: every tenant's): those of up to
   * `limit` tasks (default 100, at most 1000), oldest task first, from `cursor` (a page's `next_cursor`); the
   * tasks whose approvals could not be read are skipped and listed in `corrupt`. With `decider`, each item says
   * whether that decider may decide it (`may_decide`, the check `decide` makes).
   */
  approvals(filter?: {
    readonly tenant?: string;
    readonly decider?: { readonly actor: string; readonly role?: KeyRole };
    readonly limit?: number;
    readonly cursor?: string;
  }): Promise<ApprovalInbox>;
  /** Runs this task here until it ends or pauses (without `start()`; e.g. a CLI). */
  run(taskId: string, options?: { signal?: AbortSignal }): Promise<TaskView>;
  /** Resolves once the task is paused or has ended (`until: 'terminal'`: once it has ended). */
  wait(taskId: string, options?: { until?: 'settled' | 'terminal'; signal?: AbortSignal }): Promise<TaskView>;
  pause(taskId: string, options?: ActorOptions): Promise<TaskView>;
  resume(taskId: string, options?: ActorOptions & { force?: boolean }): Promise<TaskView>;
  cancel(taskId: string, options?: ActorOptions): Promise<TaskView>;
  /**
   * Decides pending approvals: APPROVER_NOT_ALLOWED when the decider may not (the request's rules, tightened by
   * the operator's), APPROVAL_EXPIRED for one past its time.
   */
  decide(taskId: string, decisions: readonly ApprovalDecision[], options?: DeciderOptions): Promise<TaskView>;
  provideInput(taskId: string, name: string, value: unknown, options?: ActorOptions): Promise<TaskView>;
  resolveAttention(taskId: string, decision: AttentionDecision, options?: ActorOptions): Promise<TaskView>;
  /** Events of one task ('*' for all); returns the unsubscribe function. */
  subscribe(taskId: string, listener: (event: RuntimeEvent) => void): () => void;
  /**
   * What the task printed so far in its current run here (the recent lines, bounded): a stream opened while it
   * runs starts with them. Empty when it does not run in this process; a paused or ended task's record has them.
   */
  liveLogs(taskId: string): readonly LogEntry[];
  /** Starts the loop that claims runnable tasks (pending, recovered, woken) up to `concurrency`. */
  start(): void;
  /**
   * Why the loop claims nothing, while its rounds keep failing (a store that refuses every claim; from the
   * second failure in a row), else null. The loop goes on trying; `GET /healthz` says `degraded` meanwhile.
   */
  loopFault?(): RuntimeLoopFault | null;
  /**
   * Stops claiming and waits for the running tasks: with `pauseRunning` they pause (`shutdown`) at once, with
   * `timeoutMs` those still running then do; any started runtime on the store resumes them (else the next start).
   */
  close(options?: { pauseRunning?: boolean; timeoutMs?: number }): Promise<void>;
}

/** The runtime's loop failing round after round (`Runtime.loopFault`). */
export interface RuntimeLoopFault {
  /** The last failure's message, and its stable code when it has one. */
  readonly message: string;
  readonly code: string | null;
  /** When the first of these failures was (ms since the epoch), and how many rounds failed since. */
  readonly since: number;
  readonly failures: number;
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
  /**
   * A run resumed a journal (ADR 0056): from the paused VM kept in memory (`resumed`), by replay because the kept
   * one no longer stood for the journal (`stale`), or by replay with none kept here (`missing`).
   */
  readonly pausedVm?: (outcome: 'resumed' | 'stale' | 'missing') => void;
}
