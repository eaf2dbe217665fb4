import { DEFAULT_MAX_TOOL_ARGUMENT_BYTES } from './call-size-limits.ts';
import type { CallSizeLimits } from './call-size-limits.ts';
import { CodecallError, errorRow, failure, toCodecallError } from '../errors/index.ts';
import type {
  ExecutionHost,
  ExecutionRequest,
  CarryOver,
  ExecutionResult,
  HostCall,
  JournalEntryInput,
  SandboxDriver,
  TraceContext,
} from '../spec/index.ts';
import type { BudgetLedger } from './budget-ledger.ts';
import type { TenantLimitGate } from './tenant-limit-gate.ts';
import type { CallPolicy } from './call-decision.ts';
import { attentionError } from './attention-error.ts';
import { JournalingHost } from './journaling-host.ts';
import { describeCall } from './journal-wire.ts';
import { buildReplayScript } from './replay-script.ts';
import type { PausedVms } from './paused-vms.ts';
import { pausedRun } from './paused-run.ts';
import { afterReady } from './after-ready.ts';
import { CallTracer, traceExecution } from '../telemetry/index.ts';

/** What one execution reads and writes of its task's journal. */
export interface ExecutionJournal {
  /** Earlier tool entries of this execution, in journal order (empty on a first run). */
  readonly recorded: readonly JournalEntryInput[];
  /**
   * Makes entries durable; an outcome is delivered only after its entry is committed. What it resolves to, the
   * entries as stored, lets a paused VM be kept against the journal (ADR 0056).
   */
  readonly append: (entries: readonly JournalEntryInput[]) => Promise<void | readonly JournalEntryInput[]>;
  /** Prefix of tool calls' idempotency keys (`idempotencyScope`: `task:block`). */
  readonly keyPrefix?: string;
  /** Calls earlier attempts completed, for a revised program to take over (ADR 0034). */
  readonly carry?: CarryOver;
  /** How the journal names the execution's call ids (an agent's step prefixes them); absent: as they are. */
  readonly journalId?: (callId: string) => string;
}

/** The lease a durable run holds: its token goes to tools, and it is proven before a side effect starts. */
export interface RunLease {
  readonly fencingToken: number;
  /** FENCED when the lease is no longer held (TaskStore.assertLease). */
  prove(): Promise<void>;
}

/** One journaled execution: the program, its tools and their policy, its journal, its clock. */
export interface RunJournaledOptions {
  readonly driver: SandboxDriver;
  /** The program, with everything but its host and clock (the journal supplies those). */
  readonly request: Omit<ExecutionRequest, 'host' | 'clock'>;
  /** Serves live tool calls (e.g. a ToolRegistry's host). */
  readonly live: ExecutionHost;
  /** What each call does to the world and whether it needs a human's approval (such a call pauses the run). */
  readonly policy: CallPolicy;
  readonly journal: ExecutionJournal;
  /** The worker's lease on the task, for durable runs. */
  readonly lease?: RunLease;
  /** The guest's clock at start, fixed for the task (journaled by the caller). */
  readonly startClock: number;
  /** Bounds on one call's encoded arguments and result (ADR 0027). */
  readonly sizes?: CallSizeLimits;
  readonly clock?: () => number;
  readonly signal?: AbortSignal;
  /**
   * Stops running tool calls that `signal`'s end would let finish (a pause does: LETS_CALLS_FINISH), e.g. a
   * shutdown past its time.
   */
  readonly toolSignal?: AbortSignal;
  /** How long tool calls still running when the execution ends may take to journal their outcomes. */
  readonly settleMs?: number;
  /** The task's tool budgets and what it used (ADR 0044); absent: nothing bounds its calls. */
  readonly budgets?: BudgetLedger;
  /** The tenant's rate limits and quotas on tool calls (ADR 0045); absent: none applies. */
  readonly tenantLimits?: TenantLimitGate;
  /** The caller's trace context kept with the task: tools get it as theirs when no provider makes spans. */
  readonly traceContext?: TraceContext;
  /** Paused VMs kept to resume from instead of replaying (ADR 0056), under `journal.keyPrefix`. */
  readonly pausedVms?: PausedVms;
  /**
   * Entries the caller journals before the execution (a run's attempt), still being committed while the VM
   * starts: no call reaches the host, and no result is given, before they are (a failure is thrown).
   */
  readonly ready?: Promise<unknown>;
}

export const DEFAULT_SETTLE_MS = 5_000;

/**
 * Ends that only stop the execution: the calls already running go on to their outcomes (journaled), so a pause
 * leaves no call in doubt. Every other end (a cancel, the deadline, a lost lease, a limit, a failure) stops them.
 */
const LETS_CALLS_FINISH: ReadonlySet<string> = new Set([
  'PAUSED',
  'SHUTDOWN',
  'APPROVAL_REQUIRED',
  'AWAITING_INPUT',
  'NEEDS_ATTENTION',
  'TOOL_UNAVAILABLE',
]);

function letsCallsFinish(reason: unknown): boolean {
  return reason instanceof CodecallError && LETS_CALLS_FINISH.has(reason.code);
}
/** How long requests for approval are collected after the first before the execution pauses. */
export const APPROVAL_COLLECT_MS = 20;

/**
 * Runs (or re-runs) a program against its journal: recorded outcomes are replayed in order, the rest runs
 * live and is journaled. Divergence and an unsafe call in doubt end the execution with their own codes.
 */
export async function runJournaled(options: RunJournaledOptions): Promise<ExecutionResult> {
  const controller = new AbortController();
  // What running tools see: not aborted by a pause (LETS_CALLS_FINISH).
  const tools = new AbortController();
  const ended = new CodecallError('INTERRUPTED', 'the execution ended');
  const stopTools = (reason: unknown): void => {
    if (!letsCallsFinish(reason)) tools.abort(reason);
  };
  let approvalTimer: NodeJS.Timeout | undefined;
  let approval = false;
  let fatal: CodecallError | undefined;
  // Calls in doubt first (a human must decide them before anything runs on), then approvals, then input waits.
  const pauseForHumans = (): void => {
    const attention = attentionError(host.inDoubt);
    if (attention) fatal ??= attention;
    controller.abort(
      attention ??
        (approval
          ? new CodecallError('APPROVAL_REQUIRED', 'waiting for approval')
          : new CodecallError('AWAITING_INPUT', 'waiting for input')),
    );
  };
  const forward = (): void => {
    stopTools(options.signal?.reason);
    controller.abort(options.signal?.reason);
  };
  const stopAll = (): void => tools.abort(options.toolSignal?.reason);
  if (options.signal?.aborted) forward();
  options.signal?.addEventListener('abort', forward, { once: true });
  if (options.toolSignal?.aborted) stopAll();
  options.toolSignal?.addEventListener('abort', stopAll, { once: true });
  const { journal, policy, lease } = options;
  const paused = pausedRun(options);
  // Spans of the tool calls around the host, which stays as it is (ADR 0053).
  const traced = new CallTracer({
    recorded: journal.recorded,
    effectOf: (call) => policy.effectOf(call),
    ...(options.traceContext ? { traceContext: options.traceContext } : {}),
  });
  const host = new JournalingHost({
    live: traced.live(options.live),
    recorded: journal.recorded,
    ...(paused?.resumed ? { delivered: paused.resumed.delivered } : {}),
    ...(journal.carry ? { carry: journal.carry } : {}),
    ...(policy.revisedCall ? { revisedCall: policy.revisedCall.bind(policy) } : {}),
    ...(options.sizes ? { sizes: options.sizes } : {}),
    ...(options.budgets ? { budgets: options.budgets } : {}),
    ...(options.tenantLimits ? { tenantLimits: options.tenantLimits } : {}),
    ...(journal.journalId ? { journalId: journal.journalId } : {}),
    append: traced.append(paused ? paused.append : async (entries) => void (await journal.append(entries))),
    effectOf: (call) => policy.effectOf(call),
    clock: options.clock ?? Date.now,
    onFatal: (error: CodecallError) => {
      fatal ??= error;
      stopTools(error);
      controller.abort(error);
    },
    toolSignal: tools.signal,
    ...(lease ? { fencingToken: lease.fencingToken, proveLease: () => lease.prove() } : {}),
    ...(journal.keyPrefix === undefined ? {} : { keyPrefix: journal.keyPrefix }),
    ...(policy.needsApproval
      ? { needsApproval: (call: HostCall) => policy.needsApproval?.(call) === true }
      : {}),
    ...(policy.approvalRules ? { approvalRules: policy.approvalRules.bind(policy) } : {}),
    // Wait a moment so every request of the same guest turn (e.g. one Promise.all) is journaled, then pause;
    // approvals first: a task waiting for both is shown as waiting for approval.
    onApprovalRequired: () => {
      approval = true;
      approvalTimer ??= setTimeout(pauseForHumans, APPROVAL_COLLECT_MS);
    },
    onInputRequired: () => {
      approvalTimer ??= setTimeout(pauseForHumans, APPROVAL_COLLECT_MS);
    },
    // A tool's service is down: the run ends (the calls running finish), the task tries again later.
    onUnreachable: (error) => {
      const details = { ...(error.details ?? {}), code: error.code };
      const ended = new CodecallError('TOOL_UNAVAILABLE', error.message, { details });
      fatal ??= ended;
      controller.abort(ended);
    },
    // Every lost unsafe call of the same turn (one Promise.all) is raised in the same pause.
    onAttentionRequired: () => {
      approvalTimer ??= setTimeout(pauseForHumans, APPROVAL_COLLECT_MS);
    },
    ...(options.live.onLog ? { onLog: options.live.onLog.bind(options.live) } : {}),
  });
  // A driver that serves the recorded outcomes itself saves a host round trip per replayed call (ADR 0010).
  const replay =
    options.driver.supportsReplayScript && !paused?.resumed
      ? buildReplayScript(journal.recorded, options.startClock)
      : null;
  const replayed = journal.recorded.filter((e) => e.type === 'tool_outcome').length;
  const { driver, request } = options;
  const spanOf = { driver, language: request.language, code: request.code, replayed };
  try {
    const result = await traceExecution(
      request.limits ? { ...spanOf, limits: request.limits } : spanOf,
      (span) => {
        traced.begin(span);
        return driver.execute(
          {
            ...request,
            // The driver refuses bigger arguments before they cross (the host then never holds them).
            limits: {
              ...request.limits,
              toolArgumentBytes: options.sizes?.maxToolArgumentBytes ?? DEFAULT_MAX_TOOL_ARGUMENT_BYTES,
            },
            host: options.ready ? afterReady(traced.host(host), options.ready) : traced.host(host),
            clock: () => options.startClock,
            ...(replay && replay.length > 0 ? { replay } : {}),
            ...(paused?.request ?? {}),
          },
          { signal: controller.signal },
        );
      },
    );
    await options.ready;
    // A pause waits for the calls already running; any other end stops them first.
    if (result.status === 'succeeded' || !LETS_CALLS_FINISH.has(result.error.code)) tools.abort(ended);
    await host.idle(options.settleMs ?? DEFAULT_SETTLE_MS);
    // Taken-over calls' entries wait for a commit (ADR 0034): every end is journaled after them, or fails.
    const lost = await host.flush().then(
      () => null,
      (e: unknown) => toCodecallError(e, 'STORE_ERROR'),
    );
    if (lost && !(result.status === 'failed' && result.error.code === lost.code)) {
      const { logs, resources, artifacts } = result;
      const error = failure(lost.code, lost.message);
      return { status: 'failed', error, logs, resources, ...(artifacts ? { artifacts } : {}) };
    }
    // The driver keeps an abort reason's code and message; the details (which call diverged) come from here.
    if (result.status === 'failed' && fatal && result.error.code === fatal.code) {
      const details = fatal.details as Record<string, unknown> | undefined;
      return { ...result, error: { ...result.error, ...(details ? { details } : {}) } };
    }
    return paused
      ? paused.settle(skippedJournal(result, host) ?? result)
      : (skippedJournal(result, host) ?? result);
  } catch (e) {
    await host.flush().catch(() => undefined);
    throw e;
  } finally {
    // What still runs past the settle time is given up (its outcome is not journaled: a call in doubt).
    tools.abort(ended);
    traced.end();
    clearTimeout(approvalTimer);
    options.signal?.removeEventListener('abort', forward);
    options.toolSignal?.removeEventListener('abort', stopAll);
  }
}

/**
 * A program that ended by itself (returned, or threw) on a replay must have asked again for every call its
 * journal holds: one it skipped happened, and a result that does not know of it is not the task's result. Ends
 * decided by the host (a pause, a cancel, a limit, a failure of the machinery) are not the program's: their
 * calls may simply not have come yet.
 */
function skippedJournal(result: ExecutionResult, host: JournalingHost): ExecutionResult | null {
  if (result.status === 'failed') {
    const kind = errorRow(result.error.code)?.kind;
    if (kind !== undefined && kind !== 'guest' && kind !== 'tool') return null;
    if (result.error.code === 'PROTOCOL_VIOLATION') return null;
  }
  const skipped = host.firstUnissued(result.resources.toolCalls);
  if (skipped === null) return null;
  const { callId, recorded } = skipped;
  const ended = result.status === 'succeeded' ? 'returned' : `threw ${result.error.code}`;
  const error = failure(
    'REPLAY_DIVERGENCE',
    `${callId}: the journal has ${describeCall(recorded.tool, recorded.args)}, the program ${ended} without calling it again`,
    {
      call_id: callId,
      journal: recorded,
      ended:
        result.status === 'succeeded' ? { status: 'succeeded' } : { status: 'failed', error: result.error },
    },
  );
  const { logs, resources, artifacts } = result;
  return { status: 'failed', error, logs, resources, ...(artifacts ? { artifacts } : {}) };
}
