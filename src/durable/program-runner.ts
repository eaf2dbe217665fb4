import type {
  ExecutionLimits,
  ExecutionResult,
  GuestToolBinding,
  JournalEntryInput,
  LogEntry,
  ProgramRun,
  SandboxDriver,
  SandboxPolicy,
  WorkspaceFile,
} from '../spec/index.ts';
import { runJournaled } from './run-journaled.ts';
import type { RunnerTools } from './runner-tools.ts';

export interface ProgramRunnerOptions {
  readonly driver: SandboxDriver;
  readonly tools: RunnerTools;
  /** What the guest may call (the task's allowed tools). */
  readonly bindings: readonly GuestToolBinding[];
  readonly seed: number;
  readonly limits?: Partial<ExecutionLimits>;
  readonly policy?: SandboxPolicy;
  /** The task's input files, in every execution's working directory. */
  readonly files?: readonly WorkspaceFile[];
  readonly onLog?: (entry: LogEntry) => void;
  /** The guest's clock at start, fixed for the task. */
  readonly startClock: number;
  readonly clock: () => number;
  readonly signal: AbortSignal;
  /** Sees every batch of entries an execution journals. */
  readonly onAppend?: (entries: readonly JournalEntryInput[]) => void;
}

/** Journaled executions of one task's programs: its tools, effects, approvals, limits, clock and signal. */
export function programRunner(o: ProgramRunnerOptions): (run: ProgramRun) => Promise<ExecutionResult> {
  const { tools } = o;
  return (run) =>
    runJournaled({
      driver: o.driver,
      request: {
        code: run.code,
        language: run.language,
        tools: o.bindings,
        seed: o.seed,
        ...(o.limits ? { limits: o.limits } : {}),
        ...(o.policy ? { policy: o.policy } : {}),
        ...(o.files && o.files.length > 0 ? { files: o.files } : {}),
      },
      live: o.onLog ? tools.host({ onLog: o.onLog }) : tools.host(),
      effectOf: (call) =>
        call.kind === 'timer' ? 'read' : (tools.get(call.namespace, call.name)?.effect ?? 'unsafe'),
      recorded: run.recorded,
      append: (entries) => {
        o.onAppend?.(entries);
        return run.append(entries);
      },
      startClock: o.startClock,
      needsApproval: (call) => {
        if (call.kind !== 'tool') return false;
        const policy = tools.get(call.namespace, call.name)?.requiresApproval;
        return typeof policy === 'function' ? policy(call.args) : policy === true;
      },
      keyPrefix: run.keyPrefix,
      clock: o.clock,
      signal: o.signal,
    });
}
