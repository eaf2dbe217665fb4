import type { GuestLanguage, LogLevel, TaskStatus } from '../spec/index.ts';
import type { CorruptTaskItem, TaskListItem, TaskView } from '../api/index.ts';

export type { TaskListItem, TaskView };

export interface ClientOptions {
  /** The service's base URL, e.g. `http://127.0.0.1:8484`. */
  readonly url: string;
  /** An API key (`cc_...`), sent as `Authorization: Bearer KEY`. */
  readonly key?: string | undefined;
  /** Defaults to the global fetch. */
  readonly fetch?: typeof fetch;
}

export interface CallOptions {
  readonly signal?: AbortSignal;
}

/** The body of POST /api/v1/tasks; only the fields given are sent. */
export interface SubmitRequest {
  /** The program (exec mode), or `instruction` (agent mode). */
  readonly code?: string;
  readonly instruction?: string;
  readonly mode?: 'code' | 'function_calling';
  readonly max_steps?: number;
  readonly files?: readonly { readonly name: string; readonly content_base64: string }[];
  readonly language?: GuestLanguage;
  readonly tools?: readonly string[];
  readonly tool_constraints?: {
    readonly timeout_seconds?: number;
    readonly cpu_seconds?: number;
    readonly max_memory_mb?: number;
  };
  readonly session_id?: string;
  readonly callback_url?: string;
  readonly max_retries?: number;
  readonly priority?: number;
  readonly metadata?: Readonly<Record<string, unknown>>;
}

/** The body of POST /api/v1/tasks/{id}/revise. */
export interface ReviseRequest {
  /** The fixed program, in the task's language. */
  readonly code: string;
  /** Run read/idempotent calls again instead of taking them over. */
  readonly rerun_reads?: boolean;
}

export interface SubmitReply {
  readonly task_id: string;
  readonly status: TaskStatus;
  readonly created_at: string;
}

export interface ListFilter {
  readonly status?: TaskStatus;
  readonly sessionId?: string;
  readonly limit?: number;
  readonly cursor?: string;
}

export interface TaskPage {
  /** Each task with its fields over 4 KiB (its program, metadata, ...) summarised: `get` has them whole. */
  readonly tasks: TaskListItem[];
  readonly next_cursor: string | null;
  /** Tasks of the page the store cannot read as written: skipped from `tasks`, flagged here (older servers: none). */
  readonly corrupt?: readonly CorruptTaskItem[];
}

export interface TaskEvent {
  readonly seq: number;
  readonly type: string;
  readonly data: Readonly<Record<string, unknown>>;
  readonly created_at: string;
}

export interface EventPage {
  readonly events: TaskEvent[];
  readonly next_after: number | null;
}

/** What GET /tasks/:id/stream sends: the view first, then status changes, log lines and journal entries. */
export type StreamEvent =
  | { readonly type: 'view' | 'status'; readonly view: TaskView }
  | { readonly type: 'log'; readonly level: LogLevel; readonly message: string }
  | { readonly type: 'journal'; readonly entries: readonly TaskEvent[] };

export type ControlAction = 'pause' | 'resume' | 'cancel';

export interface CodecallClient {
  submit(
    request: SubmitRequest,
    options?: CallOptions & { idempotencyKey?: string | undefined },
  ): Promise<SubmitReply>;
  /**
   * Fix and continue (ADR 0034): a new task runs `code` in place of the ended code task's program, taking over
   * the calls it completed; the new task's view.
   */
  revise(
    taskId: string,
    request: ReviseRequest,
    options?: CallOptions & { idempotencyKey?: string | undefined },
  ): Promise<TaskView>;
  get(taskId: string, options?: CallOptions): Promise<TaskView>;
  list(filter?: ListFilter, options?: CallOptions): Promise<TaskPage>;
  control(
    taskId: string,
    request: { action: ControlAction; reason?: string | undefined },
    options?: CallOptions,
  ): Promise<TaskView>;
  decide(
    taskId: string,
    approvalId: string,
    request: { decision: 'approve' | 'reject'; reason?: string | undefined },
    options?: CallOptions,
  ): Promise<TaskView>;
  input(taskId: string, request: { name: string; value: unknown }, options?: CallOptions): Promise<TaskView>;
  /** A human's decision on a task paused `needs_attention`: retry the call, skip it with `result`, or fail. */
  resolveAttention(
    taskId: string,
    request: {
      action: 'retry' | 'skip' | 'fail';
      call_id?: string | undefined;
      result?: unknown;
      reason?: string | undefined;
    },
    options?: CallOptions,
  ): Promise<TaskView>;
  events(
    taskId: string,
    page?: { after?: number; limit?: number },
    options?: CallOptions,
  ): Promise<EventPage>;
  /** The task's live events until the server ends the stream (after the task's end) or the signal aborts. */
  stream(taskId: string, options?: CallOptions): AsyncIterable<StreamEvent>;
}
