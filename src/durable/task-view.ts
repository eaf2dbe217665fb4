import { decodeValue, toJsonView } from '../codec/index.ts';
import type {
  AgentMode,
  ArtifactInfo,
  JournalEntry,
  LogEntry,
  PauseReason,
  TaskRecord,
  TaskStatus,
} from '../spec/index.ts';
import { stepsView } from './step-view.ts';
import type { StepView } from './step-view.ts';
import { attentionCall, completedCalls, pendingInputs } from './journal-state.ts';
import { pendingApprovals } from './pending-approvals.ts';

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
  readonly pending_inputs: readonly { call_id: string; name: string; deadline: string | null }[];
  /** The call a `needs_attention` task waits on a decision for (retry, skip, fail). */
  readonly attention: { call_id: string; tool: string; arguments: unknown } | null;
  /** The step being run: exec mode has one; an agent task counts its model round trips (0 before the first). */
  readonly current_step: number;
  readonly progress: {
    readonly tool_calls_completed: number;
    readonly journal_entries: number;
    /** Agent steps that have ended (code run, calls answered). */
    readonly steps_completed: number;
  };
  /** Exec mode: the program the caller sent (agent mode: null; its code is in `steps`). */
  readonly code: string | null;
  /** Agent mode: what the model was asked, how it works, and its steps (with the journal). */
  readonly instruction: string | null;
  readonly mode: AgentMode | null;
  readonly steps: readonly StepView[] | null;
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
  readonly error: { readonly code: string; readonly message: string } | null;
  readonly language: string;
  readonly metadata: Readonly<Record<string, unknown>> | null;
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

/** Builds the view; without the journal, the parts that need it are empty (listing many tasks). */
export function taskView(
  record: TaskRecord,
  journal?: readonly JournalEntry[],
  artifacts: readonly ArtifactInfo[] = [],
): TaskView {
  const last = journal?.at(-1);
  const res = record.resources;
  const ran = record.executionLog !== null || record.result !== null;
  const agent = record.input.kind === 'instruction' ? record.input : null;
  const steps = agent && journal ? stepsView(journal) : null;
  return {
    task_id: record.id,
    status: record.status,
    pause_reason: record.pauseReason,
    checkpoint_id: last ? `${record.id}:${last.seq}` : null,
    resumable:
      record.status === 'paused' &&
      (record.pauseReason === 'user_request' ||
        record.pauseReason === 'shutdown' ||
        (record.pauseReason === 'needs_attention' && record.error?.code === 'INCOMPATIBLE_CHECKPOINT')),
    pending_approvals: journal
      ? pendingApprovals(journal).map((a) => ({ id: a.id, tool: a.tool, arguments: toJsonView(a.arguments) }))
      : [],
    pending_inputs: journal
      ? pendingInputs(journal).map((p) => ({
          call_id: p.callId,
          name: p.name,
          deadline: p.deadline === null ? null : new Date(p.deadline).toISOString(),
        }))
      : [],
    attention: attentionView(record, journal),
    current_step: agent ? (steps?.at(-1)?.step ?? 0) : 1,
    progress: {
      tool_calls_completed: journal ? completedCalls(journal) : (res?.toolCalls ?? 0),
      journal_entries: last?.seq ?? 0,
      steps_completed: agent ? (steps?.filter((s) => s.ok !== null).length ?? 0) : ran ? 1 : 0,
    },
    code: record.input.kind === 'code' ? record.input.code : null,
    instruction: agent ? agent.instruction : null,
    mode: agent ? agent.mode : null,
    steps: agent ? steps : null,
    artifacts: artifacts.map((a) => ({ name: a.name, size: a.size, sha256: a.sha256 })),
    result: ran
      ? {
          output: record.result === null ? null : toJsonView(decodeValue(record.result)),
          execution_log: record.executionLog ?? [],
          resources_used: {
            cpu_time_s: round((res?.cpuMs ?? 0) / 1000),
            memory_mb: round((res?.memoryBytes ?? 0) / (1024 * 1024)),
            wall_time_s: round((res?.wallMs ?? 0) / 1000),
            tool_calls: res?.toolCalls ?? 0,
          },
        }
      : null,
    error: record.error === null ? null : { code: record.error.code, message: record.error.message },
    language: record.input.language,
    metadata: record.input.metadata ?? null,
    attempts: record.attempts,
    tenant: record.tenant,
    session_id: record.sessionId,
    batch_id: record.batchId,
    priority: record.priority,
    callback_url: record.callbackUrl,
    max_retries: record.maxRetries,
    retries: record.retries,
    deadline: record.deadlineAt === null ? null : new Date(record.deadlineAt).toISOString(),
    created_at: record.createdAt,
    updated_at: record.updatedAt,
  };
}

function attentionView(record: TaskRecord, journal?: readonly JournalEntry[]): TaskView['attention'] {
  if (!journal || record.status !== 'paused' || record.pauseReason !== 'needs_attention') return null;
  const call = attentionCall(journal);
  return call ? { call_id: call.callId, tool: call.tool, arguments: toJsonView(call.arguments) } : null;
}

function round(n: number): number {
  return Math.round(n * 1000) / 1000;
}
