import { decodeValue, toJsonView } from '../codec/index.ts';
import { CodecallError } from '../errors/index.ts';
import { networkAccessToWire, taskBudgetsToWire } from '../spec/index.ts';
import type { ArtifactInfo, TaskBudgets, TaskError, TaskRecord, ViewJournal } from '../spec/index.ts';
import { viewApprovals, viewAttentionCalls, viewInputs } from './summary-view.ts';
import { originView, revisionView } from './revision-view.ts';
import type { BudgetsView, RevisedByView, StepView, TaskView } from '../api/index.ts';

/** What a view shows of a task's journal: its summary and the rows it names; an agent task's steps besides. */
export interface ViewParts {
  readonly journal: ViewJournal;
  /** An agent task's steps (its journal's content, read in pages); absent for a code task. */
  readonly steps?: readonly StepView[];
  /** The tasks that revise this one (the store's index of revisions); absent when none does or it was not read. */
  readonly revisedBy?: RevisedByView;
}

/** Builds the view; without the journal's parts, the parts that need them are empty (listing many tasks). */
export function taskView(
  record: TaskRecord,
  parts?: ViewParts,
  artifacts: readonly ArtifactInfo[] = [],
): TaskView {
  const journal = parts?.journal;
  const seq = journal?.summary.seq ?? 0;
  const res = record.resources;
  const access = record.input.constraints?.networkAccess;
  const ran = record.executionLog !== null || record.result !== null;
  const agent = record.input.kind === 'instruction' ? record.input : null;
  const steps = agent && parts?.steps ? parts.steps : null;
  const attention = attentionView(record, journal);
  return {
    task_id: record.id,
    status: record.status,
    pause_reason: record.pauseReason,
    checkpoint_id: seq > 0 ? `${record.id}:${seq}` : null,
    resumable:
      record.status === 'paused' &&
      (record.pauseReason === 'user_request' ||
        record.pauseReason === 'shutdown' ||
        (record.pauseReason === 'needs_attention' &&
          (record.error?.code === 'INCOMPATIBLE_CHECKPOINT' || record.error?.code === 'TOOL_UNAVAILABLE'))),
    pending_approvals: journal
      ? viewApprovals(journal).map((a) => ({ id: a.id, tool: a.tool, arguments: toJsonView(a.arguments) }))
      : [],
    pending_inputs: journal
      ? viewInputs(journal).map((p) => ({
          call_id: p.callId,
          name: p.name,
          deadline: p.deadline === null ? null : new Date(p.deadline).toISOString(),
          ...(p.forCall === undefined
            ? {}
            : { for_call: p.forCall, message: p.message ?? '', schema: p.schema ?? null }),
        }))
      : [],
    attention: attention[0] ?? null,
    attention_calls: attention,
    current_step: agent ? (steps?.at(-1)?.step ?? 0) : 1,
    progress: {
      tool_calls_completed: journal ? journal.summary.toolOutcomes : (res?.toolCalls ?? 0),
      tool_calls_carried: journal?.summary.carried ?? 0,
      journal_entries: seq,
      steps_completed: agent ? (steps?.filter((s) => s.ok !== null).length ?? 0) : ran ? 1 : 0,
    },
    code: record.input.kind === 'code' ? record.input.code : null,
    instruction: agent ? agent.instruction : null,
    mode: agent ? agent.mode : null,
    answer_schema: agent?.answerSchema ?? null,
    steps: agent ? steps : null,
    revision: revisionView(record.input, journal),
    ...(parts?.revisedBy ? { revised_by: parts.revisedBy } : {}),
    artifacts: artifacts.map((a) => ({ name: a.name, size: a.size, sha256: a.sha256 })),
    result: ran
      ? {
          output: record.result === null ? null : toJsonView(storedOutput(record.id, record.result)),
          execution_log: record.executionLog ?? [],
          resources_used: {
            cpu_time_s: round((res?.cpuMs ?? 0) / 1000),
            memory_mb: round((res?.memoryBytes ?? 0) / (1024 * 1024)),
            wall_time_s: round((res?.wallMs ?? 0) / 1000),
            tool_calls: res?.toolCalls ?? 0,
          },
        }
      : null,
    error: record.error === null ? null : errorView(record.error),
    corrupt: null,
    language: record.input.language,
    metadata: record.input.metadata ?? null,
    network_access: access ? networkAccessToWire(access) : null,
    ...budgetsView(record.input.constraints?.budgets, journal),
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

function attentionView(record: TaskRecord, journal?: ViewJournal): TaskView['attention_calls'] {
  if (!journal || record.status !== 'paused' || record.pauseReason !== 'needs_attention') return [];
  return viewAttentionCalls(journal).map((call) => ({
    call_id: call.callId,
    tool: call.tool,
    arguments: toJsonView(call.arguments),
    ...(call.earlier
      ? {
          earlier: {
            origin: originView(call.earlier.origin),
            tool: call.earlier.tool,
            arguments: toJsonView(call.earlier.arguments),
          },
        }
      : {}),
  }));
}

/** The task's result; a result column that is not a stored value was edited: CHECKPOINT_CORRUPT. */
function storedOutput(taskId: string, result: string): unknown {
  try {
    return decodeValue(result);
  } catch {
    throw new CodecallError(
      'CHECKPOINT_CORRUPT',
      `Row of task ${taskId} is corrupt: result is not a stored value`,
      {
        details: { taskId, log: 'task', column: 'result' },
      },
    );
  }
}

function round(n: number): number {
  return Math.round(n * 1000) / 1000;
}

/** A failed task's error: its code and message, and the guest's error class and position when they are known. */
function errorView(error: TaskError): TaskView['error'] {
  const { code, message, name, line, column } = error;
  return {
    code,
    message,
    ...(name === undefined ? {} : { name }),
    ...(line === undefined ? {} : { line }),
    ...(column === undefined ? {} : { column }),
  };
}

/** A task's budgets in the wire's form with what it used (from its journal's summary; null without it). */
function budgetsView(
  budgets: TaskBudgets | undefined,
  journal: ViewJournal | undefined,
): { budgets?: BudgetsView } {
  if (!budgets) return {};
  const usage = journal?.summary.usage;
  const tools: Record<string, { calls: number; wall_seconds: number }> = {};
  for (const [name, t] of Object.entries(usage?.tools ?? {})) {
    tools[name] = { calls: t.calls, wall_seconds: round(t.wallMs / 1000) };
  }
  const used = journal ? { calls: usage?.calls ?? 0, cost: round(usage?.cost ?? 0), tools } : null;
  return { budgets: { ...taskBudgetsToWire(budgets), used } };
}
