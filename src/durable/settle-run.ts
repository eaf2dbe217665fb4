import { encodeValue } from '../codec/index.ts';
import { errorRow, failure } from '../errors/index.ts';
import { isArtifactStore, readJournalPaged } from '../spec/index.ts';
import type {
  JournalEntry,
  AttentionCallData,
  ExecutionResult,
  ControlOf,
  JournalEntryInput,
  Lease,
  TaskPatch,
  TaskRecord,
  SerializedError,
  TaskError,
  TaskResources,
  TaskStore,
} from '../spec/index.ts';
import { nextWake } from './journal-state.ts';

/** The most log lines a task record keeps (the guest's own OUTPUT_LIMIT bounds their bytes). */
export const MAX_KEPT_LOG_LINES = 10_000;

/** Resources over all runs: CPU and wall time add up (a replay computes again), memory is the peak. */
export function addResources(previous: TaskResources | null, run: ExecutionResult): TaskResources {
  const r = run.resources;
  return {
    cpuMs: (previous?.cpuMs ?? 0) + (r.cpuMs ?? 0),
    wallMs: (previous?.wallMs ?? 0) + r.wallMs,
    memoryBytes: Math.max(previous?.memoryBytes ?? 0, r.memoryBytes),
    toolCalls: Math.max(previous?.toolCalls ?? 0, r.toolCalls),
  };
}

export interface SettleOptions {
  readonly store: TaskStore;
  readonly lease: Lease;
  readonly task: TaskRecord;
  readonly result: ExecutionResult;
  /** Who asked for the pause or cancel that ended the run, when one did. */
  readonly actor?: string;
  /** This runner was asked to cancel the task: a pause the run ended in becomes the cancel. */
  readonly cancelled?: boolean;
  /** The journal holds input waits (so a pause may need a wake-up time); without them it is not read again. */
  readonly inputRequested?: boolean;
  /** The backoff before infrastructure retry number `retries + 1`. */
  readonly retryDelayMs?: (retries: number) => number;
  /**
   * Runs again after TOOL_UNAVAILABLE (a tool's service down, ADR 0047), counted apart from `max_retries`, and the
   * backoff before run again number `n + 1`; once spent, `max_retries` counts them, then the task pauses
   * `needs_attention`.
   */
  readonly unavailable?: { readonly retries: number; readonly delayMs: (n: number) => number };
  readonly clock?: () => number;
}

function isAttentionCall(c: unknown): c is AttentionCallData {
  if (c === null || typeof c !== 'object') return false;
  const r = c as Record<string, unknown>;
  return typeof r.call_id === 'string' && typeof r.tool === 'string' && typeof r.args === 'string';
}

/** Ends a run: journals why it stopped and moves the task to its next status with what the run left. */
export async function settleRun(options: SettleOptions): Promise<TaskRecord> {
  const { result } = options;
  if (result.status === 'failed' && errorRow(result.error.code)?.pauses) {
    // A cancel asked of this run from elsewhere (and not yet seen by the control poll) wins over its pause. The
    // store enforces the same in the update itself, for a request that lands after this read.
    const current = options.cancelled ? null : await options.store.getTask(options.lease.taskId);
    if (options.cancelled || current?.requestedAction === 'cancel') {
      const error = failure('CANCELLED', 'cancelled by request');
      return settle({ ...options, result: { ...result, error } });
    }
  }
  return settle(options);
}

async function settle(options: SettleOptions): Promise<TaskRecord> {
  const { store, lease, task, result } = options;
  // What the program left in its working directory (drivers with a file system), before the status says so.
  if (result.artifacts && isArtifactStore(store)) {
    await store.putArtifacts(lease.taskId, result.artifacts, { fencingToken: lease.fencingToken });
  }
  // The audit log names who ended the run (a pause or cancel asked by someone), else the lease owner.
  const fenced = { fencingToken: lease.fencingToken, ...(options.actor ? { actor: options.actor } : {}) };
  const kept: TaskPatch = {
    executionLog: result.logs.slice(0, MAX_KEPT_LOG_LINES),
    resources: addResources(task.resources, result),
  };
  const control = (
    data: ControlOf<'pause' | 'await_approval' | 'await_input' | 'needs_attention' | 'cancel' | 'retry'>,
  ): JournalEntryInput[] => [
    { type: 'control', data: options.actor ? { ...data, actor: options.actor } : data },
  ];
  if (result.status === 'succeeded') {
    return store.updateTask(
      lease.taskId,
      { ...kept, status: 'succeeded', result: encodeValue(result.value), error: null },
      fenced,
    );
  }
  const { code, message } = result.error;
  const details = result.error.details ?? {};
  if (code === 'TOOL_UNAVAILABLE' && options.unavailable) {
    // Its own budget (ADR 0047): a server that is restarting should not need a human, nor spend `max_retries`.
    const spent = unavailableRetries(await readJournalPaged(store, lease.taskId));
    if (spent < options.unavailable.retries) {
      const runAfter = (options.clock ?? Date.now)() + options.unavailable.delayMs(spent);
      return store.updateTask(
        lease.taskId,
        { ...kept, status: 'pending', runAfter, error: { code, message } },
        { ...fenced, append: control({ action: 'retry', code, retry: spent + 1, run_after: runAfter }) },
      );
    }
  }
  // Then `max_retries` as for any infrastructure failure; spent, a human.
  if (code === 'TOOL_UNAVAILABLE' && task.retries >= task.maxRetries) {
    // A tool's service is down (ADR 0047) and the retries are spent: the task waits for a human (resolve it with
    // retry once the service is back) rather than failing.
    return store.updateTask(
      lease.taskId,
      { ...kept, status: 'paused', pauseReason: 'needs_attention', error: { code, message } },
      { ...fenced, append: control({ action: 'needs_attention' }) },
    );
  }
  switch (code) {
    case 'PAUSED':
    case 'SHUTDOWN':
      return store.updateTask(
        lease.taskId,
        { ...kept, status: 'paused', pauseReason: code === 'PAUSED' ? 'user_request' : 'shutdown' },
        { ...fenced, append: control({ action: 'pause' }) },
      );
    case 'APPROVAL_REQUIRED':
    case 'AWAITING_INPUT': {
      const approval = code === 'APPROVAL_REQUIRED';
      // Input waits time out and approvals expire: the sweep wakes the task at the earliest (`wakeAt`).
      const wakeAt =
        options.inputRequested || approval ? nextWake(await readJournalPaged(store, lease.taskId)) : null;
      return store.updateTask(
        lease.taskId,
        { ...kept, status: 'paused', pauseReason: approval ? 'approval_required' : 'awaiting_input', wakeAt },
        { ...fenced, append: control({ action: approval ? 'await_approval' : 'await_input' }) },
      );
    }
    case 'NEEDS_ATTENTION': {
      const text = (v: unknown): string | null => (typeof v === 'string' ? v : null);
      const call = { call_id: text(details.call_id), tool: text(details.tool), args: text(details.args) };
      const calls = Array.isArray(details.calls) ? details.calls.filter(isAttentionCall) : [];
      return store.updateTask(
        lease.taskId,
        { ...kept, status: 'paused', pauseReason: 'needs_attention', error: { code, message } },
        {
          ...fenced,
          append: control({ action: 'needs_attention', ...call, ...(calls.length > 0 ? { calls } : {}) }),
        },
      );
    }
    case 'CANCELLED':
      return store.updateTask(
        lease.taskId,
        { ...kept, status: 'cancelled', error: { code, message } },
        { ...fenced, append: control({ action: 'cancel' }) },
      );
    default:
      // Failures of the machinery (the row says which) queue the task again, to replay its journal.
      if (errorRow(code)?.retryable && task.retries < task.maxRetries) {
        const now = (options.clock ?? Date.now)();
        const runAfter = now + (options.retryDelayMs?.(task.retries) ?? 0);
        return store.updateTask(
          lease.taskId,
          { ...kept, status: 'pending', runAfter, retries: task.retries + 1, error: { code, message } },
          {
            ...fenced,
            append: control({ action: 'retry', code, retry: task.retries + 1, run_after: runAfter }),
          },
        );
      }
      return store.updateTask(
        lease.taskId,
        { ...kept, status: 'failed', error: { code, message, ...whereItFailed(result.error) } },
        fenced,
      );
  }
}

/** The guest's error class and position, as `exec --json` shows them: kept with a failed task for its view. */
function whereItFailed(error: SerializedError & { line?: number; column?: number }): Partial<TaskError> {
  const kind = errorRow(error.code)?.kind;
  const named = (kind === 'guest' || kind === 'tool') && typeof error.name === 'string';
  return {
    ...(named ? { name: error.name } : {}),
    ...(typeof error.line === 'number' ? { line: error.line } : {}),
    ...(typeof error.column === 'number' ? { column: error.column } : {}),
  };
}

/**
 * How many runs again after TOOL_UNAVAILABLE the journal holds since the last one a human asked for (a resume) or a
 * retry for another cause: the unavailability budget is spent by an outage, and given back by a human's word.
 */
function unavailableRetries(journal: readonly JournalEntry[]): number {
  let n = 0;
  for (let i = journal.length - 1; i >= 0; i--) {
    const e = journal[i];
    if (e?.type !== 'control') continue;
    if (e.data.action === 'resume') break;
    if (e.data.action === 'retry') {
      if (e.data.code !== 'TOOL_UNAVAILABLE') break;
      n++;
    }
  }
  return n;
}
