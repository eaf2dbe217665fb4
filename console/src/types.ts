// What the console reads of the API's answers (the service's snake_case field names; see GET /api/v1/openapi.json).

export const STATUSES = ['pending', 'running', 'paused', 'succeeded', 'failed', 'cancelled'] as const;
export type TaskStatus = (typeof STATUSES)[number];

export interface LogEntry {
  readonly level: string;
  readonly message: string;
}

/** Where a call that was taken over ran (ADR 0034): that task's call (`task_id` absent: this task). */
export interface CallOrigin {
  readonly task_id?: string;
  readonly call_id: string;
}

/** A call an earlier attempt completed: a revision's call stands beside it, or did not repeat it. */
export interface EarlierCall {
  readonly origin: CallOrigin;
  readonly tool: string;
  readonly arguments: unknown;
}

/** A task that revises an ended one (POST /tasks/{id}/revise): what it was offered and what it took over. */
export interface RevisionView {
  readonly revision_of: string;
  readonly rerun_reads: boolean;
  readonly offered: number;
  readonly carried: number;
  /** Calls that changed the world in an earlier attempt, which this revision did not make again. */
  readonly not_repeated: readonly EarlierCall[];
}

/** The tasks that revise this one: the newest 20, oldest first (the newest last), and how many there are. */
export interface RevisedByView {
  readonly task_ids: readonly string[];
  readonly total: number;
}

/** A call a human decides on (`needs_attention`); `earlier`: a revised call held beside an earlier one. */
export interface AttentionCall {
  readonly call_id: string;
  readonly tool: string;
  readonly arguments: unknown;
  readonly earlier?: EarlierCall;
}

export interface ToolCallView {
  readonly call_id: string;
  readonly tool: string;
  readonly arguments: unknown;
  readonly ok: boolean | null;
  readonly result?: unknown;
  readonly error?: unknown;
  /** Not run: its value taken over from an earlier attempt's call. */
  readonly carried_from?: CallOrigin;
}

export interface StepView {
  readonly step: number;
  readonly reply: string | null;
  readonly code: string | null;
  readonly tool_calls: readonly ToolCallView[];
  readonly ok: boolean | null;
  readonly final: boolean;
  readonly output: readonly LogEntry[];
  readonly value: unknown;
  readonly error: unknown;
  readonly model: string | null;
}

export interface TaskView {
  readonly task_id: string;
  readonly status: TaskStatus;
  readonly pause_reason: string | null;
  readonly resumable: boolean;
  readonly pending_approvals: readonly { id: string; tool: string; arguments: unknown }[];
  readonly pending_inputs: readonly { call_id: string; name: string; deadline: string | null }[];
  readonly attention: AttentionCall | null;
  readonly attention_calls: readonly AttentionCall[];
  readonly current_step: number;
  readonly progress: {
    readonly tool_calls_completed: number;
    readonly journal_entries: number;
    readonly steps_completed: number;
    /** Calls taken over from earlier attempts instead of run (absent from older servers). */
    readonly tool_calls_carried?: number;
  };
  readonly code: string | null;
  readonly instruction: string | null;
  readonly mode: string | null;
  /** The JSON Schema the answer must match (absent from older servers). */
  readonly answer_schema?: Readonly<Record<string, unknown>> | null;
  readonly steps: readonly StepView[] | null;
  readonly artifacts: readonly { name: string; size: number; sha256: string }[];
  readonly result: {
    readonly output: unknown;
    readonly execution_log: readonly LogEntry[];
    readonly resources_used: {
      readonly cpu_time_s: number;
      readonly memory_mb: number;
      readonly wall_time_s: number;
      readonly tool_calls: number;
    };
  } | null;
  readonly error: TaskError | null;
  /** Set when the store cannot read the task as written (CHECKPOINT_CORRUPT); absent from older servers. */
  readonly corrupt?: { readonly code: string; readonly message: string } | null;
  /** Set on a revision of an ended task (absent from older servers). */
  readonly revision?: RevisionView | null;
  /** Set when tasks revise this one (absent when none does, in lists, and from older servers). */
  readonly revised_by?: RevisedByView;
  readonly language: string;
  /** The task's tool budgets and what it used of them (absent when it sets none, and from older servers). */
  readonly budgets?: BudgetsView;
  /** Where the program's fetch may go; null: nowhere (absent from older servers). */
  readonly network_access?: { readonly allow: readonly string[]; readonly allow_http?: boolean } | null;
  readonly tenant: string;
  readonly session_id: string | null;
  readonly batch_id: string | null;
  readonly attempts: number;
  readonly created_at: string;
  readonly updated_at: string;
}

/** A task's tool budgets (ADR 0044); `used` is null in lists. */
export interface BudgetsView {
  readonly max_calls?: number;
  readonly max_cost?: number;
  readonly tools?: Readonly<
    Record<string, { readonly max_calls?: number; readonly max_wall_seconds?: number }>
  >;
  readonly used: {
    readonly calls: number;
    readonly cost: number;
    readonly tools: Readonly<Record<string, { readonly calls: number; readonly wall_seconds: number }>>;
  } | null;
}

/** How a task failed (or was stopped); `line`/`column`: where in its program, when the error says. */
export interface TaskError {
  readonly code: string;
  readonly message: string;
  /** The class of a program's own error (TypeError, ValueError). */
  readonly name?: string;
  readonly line?: number;
  readonly column?: number;
}

/** A tool as GET /api/v1/tools lists it. */
export interface ToolItem {
  readonly name: string;
  readonly namespace: string;
  readonly description: string;
  readonly effect: string;
  readonly approval: 'never' | 'always' | 'by_arguments';
  readonly input_schema: unknown;
}

export interface TaskList {
  readonly tasks: TaskView[];
  readonly next_cursor: string | null;
  readonly corrupt?: readonly CorruptItem[];
}

/** A task a list or the inbox skipped because the store cannot read it as written. */
export interface CorruptItem {
  readonly task_id: string;
  readonly tenant: string;
  readonly status: TaskStatus;
  readonly code: string;
  readonly message: string;
}

/** One entry of GET /tasks/{id}/events (journal or audit), or of the stream's `journal` events (journal). */
export interface TaskEvent {
  readonly source?: 'journal' | 'audit';
  readonly seq: number;
  readonly type: string;
  readonly data: Readonly<Record<string, unknown>>;
  readonly created_at: string;
}

export interface InboxItem {
  readonly task_id: string;
  readonly approval_id: string;
  readonly tool: string;
  readonly arguments: unknown;
  readonly requested_at: string;
  readonly tenant: string;
  readonly session_id: string | null;
  /** When the request expires (null: never); an expired one is gone from the inbox. */
  readonly expires_at?: string | null;
  /** Whether this key may decide it (the server's check). */
  readonly may_decide?: boolean;
}

export interface Me {
  readonly tenant: string;
  readonly role: 'admin' | 'member';
  readonly key_id: string | null;
  readonly actor: string;
  /** `none`: the server checks no keys (--insecure-no-auth). */
  readonly auth?: 'key' | 'none';
}

export const isTerminal = (s: TaskStatus): boolean =>
  s === 'succeeded' || s === 'failed' || s === 'cancelled';

/** Whether `next` is at least as new as `prev` (views can arrive out of order: a read, a stream, an action). */
export function isNewer(next: TaskView, prev: TaskView | null | undefined): boolean {
  if (!prev) return true;
  if (next.updated_at !== prev.updated_at) return next.updated_at > prev.updated_at;
  return next.progress.journal_entries >= prev.progress.journal_entries;
}

export interface Quantiles {
  readonly count: number;
  readonly p50: number | null;
  readonly p99: number | null;
}

/** GET /api/v1/stats/overview: the operator's view over a window (ADR 0054). */
export interface Overview {
  readonly generated_at: string;
  readonly window_seconds: number;
  readonly tenant: string | null;
  readonly throughput: {
    readonly bucket_seconds: number;
    readonly per_minute: number;
    readonly buckets: readonly ThroughputBucket[];
  };
  readonly totals: Readonly<Record<TaskStatus, number>>;
  readonly tenants: readonly {
    readonly tenant: string;
    readonly pending: number;
    readonly running: number;
    readonly paused: number;
  }[];
  readonly more_tenants: number;
  readonly pause_reasons: readonly { readonly reason: string; readonly count: number }[];
  readonly error_codes: readonly { readonly code: string; readonly count: number }[];
  readonly task_latency_ms: Quantiles;
  readonly tool_latency_ms: Quantiles & { readonly failed: number };
  readonly tools: readonly (Quantiles & { readonly tool: string; readonly failed: number })[];
  readonly capped: { readonly tasks: boolean; readonly tool_calls: boolean };
}

export interface ThroughputBucket {
  readonly start: string;
  readonly succeeded: number;
  readonly failed: number;
  readonly cancelled: number;
}
