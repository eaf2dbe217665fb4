import type {
  AgentMode,
  CallOrigin,
  LogEntry,
  NetworkAccessWire,
  PauseReason,
  TaskBudgetsWire,
  TaskStatus,
} from '../spec/index.ts';

/** A task's network access as the wire gives it (snake_case). */
export type NetworkAccessView = NetworkAccessWire;

/**
 * A task's tool budgets (`tool_constraints.budgets`, ADR 0044) and what it used of them. Only the task's own: a
 * tool's declared budget is in GET /api/v1/tools.
 */
export interface BudgetsView extends TaskBudgetsWire {
  /** Counted from the journal: calls, the sum of their costs, each tool's calls and seconds; null in lists. */
  readonly used: {
    readonly calls: number;
    readonly cost: number;
    readonly tools: Readonly<Record<string, { readonly calls: number; readonly wall_seconds: number }>>;
  } | null;
}

/** The earlier attempt's completed call that a revision's call stands beside (ADR 0034). */
export interface EarlierCallView {
  readonly origin: CallOrigin;
  readonly tool: string;
  readonly arguments: unknown;
}

/** A call a task waits on a human's decision for: lost in a crash, or a revision's call held (`earlier`). */
export interface AttentionCallView {
  readonly call_id: string;
  readonly tool: string;
  readonly arguments: unknown;
  /** Set when a revision calls this tool with other arguments than an earlier attempt's completed call. */
  readonly earlier?: EarlierCallView;
}

/**
 * What a revision (ADR 0034) took over from the tasks it revises. The counts come from its journal: a list,
 * which reads no journal, shows 0 and no calls (GET the task for them).
 */
export interface RevisionView {
  /** The task this one revises. */
  readonly revision_of: string;
  /** `read`/`idempotent` calls run again instead of being taken over. */
  readonly rerun_reads: boolean;
  /** Calls earlier attempts completed, offered to this one (journaled when it first runs; 0 before). */
  readonly offered: number;
  /** Calls taken over instead of run. */
  readonly carried: number;
  /** Offers of tools that change the world (`keyed`, `unsafe`, unknown) not taken (so far): not repeated. */
  readonly not_repeated: readonly EarlierCallView[];
}

/**
 * The tasks that revise this one (ADR 0034), from the store's index of revisions (no journal read): the newest
 * 20 of them (DEFAULT_REVISIONS_LIMIT), oldest first, and how many there are.
 */
export interface RevisedByView {
  /** Oldest first (the newest revision last); the newest 20 when `total` is more. */
  readonly task_ids: readonly string[];
  /** Every revision of the task. */
  readonly total: number;
}

/** A task as the runtime, CLI and service show it (snake_case: these are the service's field names). */
export interface TaskView {
  readonly task_id: string;
  readonly status: TaskStatus;
  readonly pause_reason: PauseReason | null;
  /** `<task_id>:<seq>` of the last committed journal entry: everything up to it survives any crash. */
  readonly checkpoint_id: string | null;
  /** Whether `resume` is the way on (a pause by request or shutdown, or changed tools to accept with force). */
  readonly resumable: boolean;
  readonly pending_approvals: readonly { id: string; tool: string; arguments: unknown }[];
  /**
   * Input the task waits for: a program's `input.wait`, or a tool's request mid-call (an MCP elicitation), which
   * also has `for_call` (the tool call), `message` and `schema` (the answer's JSON Schema) (ADR 0047).
   */
  readonly pending_inputs: readonly {
    call_id: string;
    name: string;
    deadline: string | null;
    for_call?: string;
    message?: string;
    schema?: unknown;
  }[];
  /** The first call a `needs_attention` task waits on a decision for (retry, skip, fail); see attention_calls. */
  readonly attention: AttentionCallView | null;
  /** Every call in doubt the task waits on, decided in one round (empty unless `needs_attention`). */
  readonly attention_calls: readonly AttentionCallView[];
  /** The step being run: exec mode has one; an agent task counts its model round trips (0 before the first). */
  readonly current_step: number;
  readonly progress: {
    /** Calls with an outcome (taken-over ones included). */
    readonly tool_calls_completed: number;
    /** Calls taken over from an earlier attempt instead of run (ADR 0034); 0 in lists (no journal read). */
    readonly tool_calls_carried: number;
    readonly journal_entries: number;
    /** Agent steps that have ended (code run, calls answered). */
    readonly steps_completed: number;
  };
  /** Exec mode: the program the caller sent (agent mode: null; its code is in `steps`). */
  readonly code: string | null;
  /** Agent mode: what the model was asked, how it works, and its steps (with the journal). */
  readonly instruction: string | null;
  readonly mode: AgentMode | null;
  /** Agent mode: the JSON Schema the final answer must match (`answer_schema`); null when none was given. */
  readonly answer_schema: Readonly<Record<string, unknown>> | null;
  readonly steps: readonly StepView[] | null;
  /** Set when the task revises an ended one (`POST /api/v1/tasks/{id}/revise`); null otherwise. */
  readonly revision: RevisionView | null;
  /**
   * Set when tasks revise this one: they, newest last (`POST /api/v1/tasks/{id}/revise`). Absent when none does,
   * and in lists (a list reads no more than each task's row: GET the task).
   */
  readonly revised_by?: RevisedByView;
  /** Files the program left in its working directory: GET /api/v1/tasks/{id}/artifacts/{name}. */
  readonly artifacts: readonly { readonly name: string; readonly size: number; readonly sha256: string }[];
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
  /**
   * Why the task failed. A program's own error also carries its class (`name`) and where it was thrown (`line`,
   * `column`: 1-based, in the program as written) when the driver tells it, as `exec --json` prints them.
   */
  readonly error: {
    readonly code: string;
    readonly message: string;
    readonly name?: string;
    readonly line?: number;
    readonly column?: number;
  } | null;
  /**
   * Set when the store cannot read the task as written (CHECKPOINT_CORRUPT): the parts that need what is damaged
   * (its journal, or its row's garbled column) are empty, not silently missing.
   */
  readonly corrupt: { readonly code: 'CHECKPOINT_CORRUPT'; readonly message: string } | null;
  readonly language: string;
  readonly metadata: Readonly<Record<string, unknown>> | null;
  /** Where the program's fetch may go (`tool_constraints.network_access`, issue 21); null: nowhere. */
  readonly network_access: NetworkAccessView | null;
  /** The task's tool budgets and what it used of them (ADR 0044); absent when it sets none. */
  readonly budgets?: BudgetsView;
  readonly attempts: number;
  readonly tenant: string;
  readonly session_id: string | null;
  readonly batch_id: string | null;
  readonly priority: number;
  readonly callback_url: string | null;
  readonly max_retries: number;
  /** Infrastructure retries used. */
  readonly retries: number;
  readonly deadline: string | null;
  readonly created_at: string;
  readonly updated_at: string;
}

/** One step of an agent task as the view shows it: the model's reply, the code it ran, its calls and result. */
export interface StepView {
  readonly step: number;
  /** The reply's text (code mode: with its code block). */
  readonly reply: string | null;
  readonly code: string | null;
  readonly tool_calls: readonly {
    readonly call_id: string;
    readonly tool: string;
    readonly arguments: unknown;
    /** Set when the call was not run: its outcome was taken over from this earlier call (ADR 0034). */
    readonly carried_from?: CallOrigin;
    /** Null while the call runs (or waits for approval). */
    readonly ok: boolean | null;
    readonly result?: unknown;
    readonly error?: unknown;
  }[];
  /** Null while the step runs. */
  readonly ok: boolean | null;
  readonly final: boolean;
  readonly output: readonly LogEntry[];
  readonly value: unknown;
  readonly error: unknown;
  readonly model: string | null;
  readonly usage: { readonly prompt_tokens: number; readonly completion_tokens: number } | null;
}

export interface BatchView {
  readonly batch_id: string;
  readonly tenant: string;
  readonly size: number;
  readonly counts: Readonly<Record<TaskStatus, number>>;
  readonly task_ids: readonly string[];
  readonly callback_url: string | null;
  readonly created_at: string;
  readonly completed_at: string | null;
}

/**
 * What a list or an event stream gives of a field too big for it (ADR 0029): its size and digest, and for text its
 * first characters; GET /api/v1/tasks/{id} (or GET .../events/{seq}) has it in full.
 */
export interface TruncatedField {
  readonly truncated: true;
  /** UTF-8 bytes of the field: the string itself, or the JSON text of any other value. */
  readonly bytes: number;
  readonly sha256: string;
  /** A string field's first characters (lists: LISTED_HEAD_CHARS). */
  readonly head?: string;
}

/** The fields of a view that hold what a caller or a program sent or made, so may be big: a list summarises them. */
export type ListedField =
  | 'code'
  | 'instruction'
  | 'answer_schema'
  | 'metadata'
  | 'pending_approvals'
  | 'attention'
  | 'attention_calls'
  | 'steps'
  | 'result'
  | 'error'
  | 'artifacts'
  | 'budgets';

/** Every ListedField, once (the record's keys make the compiler check the list is whole). */
const LISTED: Record<ListedField, true> = {
  code: true,
  instruction: true,
  answer_schema: true,
  metadata: true,
  pending_approvals: true,
  attention: true,
  attention_calls: true,
  steps: true,
  result: true,
  error: true,
  artifacts: true,
  budgets: true,
};
export const LISTED_FIELDS = Object.keys(LISTED) as readonly ListedField[];

/**
 * A task as GET /api/v1/tasks and GET /api/v1/task-events give it: the view, each ListedField over 4 KiB (as
 * JSON) replaced by a TruncatedField and named in `truncated`, so a page costs what it shows, never whole programs.
 */
export type TaskListItem = Omit<TaskView, ListedField> & {
  readonly [K in keyof Pick<TaskView, ListedField>]: TaskView[K] | TruncatedField;
} & {
  /** The fields given as TruncatedField (absent when none). */
  readonly truncated?: readonly ListedField[];
};
