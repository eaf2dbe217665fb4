import type {
  ExecutionRequest,
  ExecutionResult,
  GuestToolBinding,
  LogEntry,
  ProgramRun,
  SandboxDriver,
  SandboxPolicy,
  TaskConstraints,
  TaskInput,
  TraceContext,
} from '../spec/index.ts';
import { defaultRevisedCallPolicy, MAX_TOOL_LOG_LINES, rulesOfTool, withToolLines } from '../spec/index.ts';
import { runJournaled } from './run-journaled.ts';
import type { RunLease } from './run-journaled.ts';
import type { RunnerTools } from './runner-tools.ts';
import type { CallSizeLimits } from './call-size-limits.ts';
import type { BudgetLedger } from './budget-ledger.ts';
import type { TenantLimitGate } from './tenant-limit-gate.ts';
import type { PausedVms } from './paused-vms.ts';

/** What every execution of a task's programs is given besides the program itself. */
export type ProgramRequest = Omit<ExecutionRequest, 'host' | 'clock' | 'code' | 'language'>;

export interface ProgramRunnerOptions {
  readonly driver: SandboxDriver;
  readonly tools: RunnerTools;
  readonly request: ProgramRequest;
  readonly onLog?: (entry: LogEntry) => void;
  /** The guest's clock at start, fixed for the task. */
  readonly startClock: number;
  readonly clock: () => number;
  readonly signal: AbortSignal;
  /** Stops running tool calls that `signal`'s end would let finish (a shutdown past its time). */
  readonly toolSignal?: AbortSignal;
  /** The worker's lease on the task: its token goes to tools, and it is proven before each side effect. */
  readonly lease?: RunLease;
  /** Bounds on one call's encoded arguments and result (ADR 0027). */
  readonly sizes?: CallSizeLimits;
  /** The operator's expiry of approval requests (`approvalTtlSeconds`); a tool's may be shorter. */
  readonly approvalTtlSeconds?: number | null;
  /** The task's tool budgets and what it used, shared by its executions (an agent's steps) (ADR 0044). */
  readonly budgets?: BudgetLedger;
  /** The tenant's rate limits and quotas on tool calls, for all its executions (ADR 0045). */
  readonly tenantLimits?: TenantLimitGate;
  /** The caller's trace context kept with the task: what tools see when no provider makes spans (ADR 0053). */
  readonly traceContext?: TraceContext;
  /** Paused VMs to resume from instead of replaying (ADR 0056). */
  readonly pausedVms?: PausedVms;
  /** What the run journals before its executions, still committing (RunJournaledOptions.ready). */
  readonly ready?: Promise<unknown>;
}

function earlierTtl(a: number | null, b: number | null): number | null {
  return a === null ? b : b === null ? a : Math.min(a, b);
}

/** The sandbox's part of a task's constraints. */
function policyOf(c: TaskConstraints): SandboxPolicy {
  return {
    ...(c.allowedLibraries ? { allowedLibraries: c.allowedLibraries } : {}),
    ...(c.allowSubprocesses === undefined ? {} : { allowSubprocesses: c.allowSubprocesses }),
    ...(c.blockedCommands ? { blockedCommands: c.blockedCommands } : {}),
  };
}

/** A task's part of its executions' requests: what the guest may call (`bindings`), seed, limits, policy, files. */
export function programRequest(input: TaskInput, bindings: readonly GuestToolBinding[]): ProgramRequest {
  const files = input.files?.map((f) => ({
    name: f.name,
    data: new Uint8Array(Buffer.from(f.data, 'base64')),
  }));
  return {
    tools: bindings,
    seed: input.seed,
    ...(input.limits ? { limits: input.limits } : {}),
    ...(input.constraints ? { policy: policyOf(input.constraints) } : {}),
    ...(files && files.length > 0 ? { files } : {}),
  };
}

/** Journaled executions of one task's programs: its tools, effects, approvals, limits, clock and signal. */
export function programRunner(o: ProgramRunnerOptions): (run: ProgramRun) => Promise<ExecutionResult> {
  const { tools } = o;
  return async (run) => {
    // What tools log (`ctx.log`, e.g. an MCP call's progress) streams live and is kept after the program's lines.
    const toolLines: LogEntry[] = [];
    const live = tools.host({
      ...(o.onLog ? { onLog: o.onLog } : {}),
      onToolLog: (entry) => {
        if (toolLines.length < MAX_TOOL_LOG_LINES) toolLines.push(entry);
        o.onLog?.(entry);
      },
    });
    const result = await runJournaled({
      driver: o.driver,
      request: { ...o.request, code: run.code, language: run.language },
      live,
      policy: {
        effectOf: (call) =>
          call.kind === 'timer' ? 'read' : (tools.get(call.namespace, call.name)?.effect ?? 'unsafe'),
        revisedCall: (call) => {
          const tool = call.kind === 'tool' ? tools.get(call.namespace, call.name) : undefined;
          return tool?.revisedCall ?? defaultRevisedCallPolicy(tool?.effect ?? 'unsafe');
        },
        needsApproval: (call) => {
          if (call.kind !== 'tool') return false;
          const policy = tools.get(call.namespace, call.name)?.requiresApproval;
          return typeof policy === 'function' ? policy(call.args) : policy === true;
        },
        approvalRules: (call) => {
          const own = call.kind === 'tool' ? tools.get(call.namespace, call.name)?.approval : undefined;
          // Who decides is journaled as the tool says (the operator's rules apply when deciding); the expiry is
          // the shorter of the tool's and the operator's.
          const rules = rulesOfTool(own);
          return { ...rules, ttlSeconds: earlierTtl(rules.ttlSeconds, o.approvalTtlSeconds ?? null) };
        },
      },
      journal: {
        recorded: run.recorded,
        append: (entries) => run.append(entries),
        keyPrefix: run.keyPrefix,
        ...(run.carry ? { carry: run.carry } : {}),
        ...(run.journalId ? { journalId: run.journalId } : {}),
      },
      startClock: o.startClock,
      clock: o.clock,
      signal: o.signal,
      ...(o.toolSignal ? { toolSignal: o.toolSignal } : {}),
      ...(o.lease ? { lease: o.lease } : {}),
      ...(o.sizes ? { sizes: o.sizes } : {}),
      ...(o.budgets ? { budgets: o.budgets } : {}),
      ...(o.tenantLimits ? { tenantLimits: o.tenantLimits } : {}),
      ...(o.traceContext ? { traceContext: o.traceContext } : {}),
      ...(o.pausedVms ? { pausedVms: o.pausedVms } : {}),
      ...(o.ready ? { ready: o.ready } : {}),
    });
    return withToolLines(result, toolLines);
  };
}
