import type { GuestToolBinding, ToolInputRequest } from './tool.ts';
import type { TraceContext } from './trace-context.ts';

export const SANDBOX_DRIVER_API_VERSION = 1;

/** Every language a program may be written in: the one list that submissions, the CLI's flags and its help use. */
export const GUEST_LANGUAGES = ['javascript', 'typescript', 'python'] as const;
export type GuestLanguage = (typeof GUEST_LANGUAGES)[number];

export function isGuestLanguage(value: unknown): value is GuestLanguage {
  return typeof value === 'string' && (GUEST_LANGUAGES as readonly string[]).includes(value);
}

export interface ExecutionLimits {
  /** Wall-clock budget for the whole execution, including time spent waiting for tools. */
  timeoutMs: number;
  /** Heap the guest may allocate. */
  memoryBytes: number;
  /** Bytes of console output kept; more ends the execution with OUTPUT_LIMIT. */
  outputBytes: number;
  /** Bytes of the serialized return value. */
  resultBytes: number;
  /** Tool calls (and timers) one execution may issue. */
  maxToolCalls: number;
  /** Tool calls running on the host at the same moment; more wait their turn. */
  maxConcurrentToolCalls: number;
  /** Size of the program text. */
  sourceBytes: number;
  /**
   * CPU time the guest may compute (all its processes together), apart from its waiting: CPU_LIMIT past it.
   * Unset, the wall-clock budget bounds it.
   */
  cpuMs?: number;
  /**
   * Largest encoded (tagged JSON) arguments of one tool call the driver lets cross the boundary: over it the
   * call reaches the host as `HostCall.argsTooLarge` (their size), never the arguments. Unset, no such bound.
   */
  toolArgumentBytes?: number;
}

export type LogLevel = 'log' | 'info' | 'warn' | 'error' | 'debug';

export interface LogEntry {
  readonly level: LogLevel;
  readonly message: string;
}

/** An error as it crosses the sandbox boundary: data only, never a host stack. */
export interface SerializedError {
  readonly code: string;
  readonly message: string;
  readonly name?: string;
  readonly details?: Record<string, unknown>;
}

/** A request from the guest for something only the host can do. */
export type HostCall =
  | {
      readonly kind: 'tool';
      readonly callId: string;
      readonly namespace: string;
      readonly name: string;
      readonly args: unknown;
      /** The arguments as they crossed the sandbox boundary (tagged JSON), when the driver has them. */
      readonly argsJson?: string;
      /**
       * The driver refused the arguments as over `ExecutionLimits.toolArgumentBytes` before they crossed: `args`
       * is null, this is what is known of them (the host fails the call with TOOL_ARGUMENTS_TOO_LARGE).
       */
      readonly argsTooLarge?: { readonly bytes: number; readonly sha256?: string };
      /** Stable across replays and restarts (`task:block:call`); set by the durable layer. */
      readonly idempotencyKey?: string;
      /** The fencing token of the lease the call runs under; set by the durable layer (see ToolContext). */
      readonly fencingToken?: number;
      /** `ToolContext.requestInput` of this call; set by the durable layer. */
      readonly requestInput?: (request: ToolInputRequest) => Promise<unknown>;
      /** The call's trace context (`ToolContext.traceContext`); set by the durable layer when traced. */
      readonly traceContext?: TraceContext;
      /**
       * Aborted when the guest gives up on the call (a fetch's AbortSignal): the host may stop it, and its outcome
       * (ABORTED, or what came first) is journaled as any, so a replay is exact. Set by drivers that can tell.
       */
      readonly cancelled?: AbortSignal;
    }
  | { readonly kind: 'timer'; readonly callId: string; readonly delayMs: number };

export type HostOutcome = (
  { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: SerializedError }
) & {
  /** The guest's clock from this delivery on (epoch ms); when absent the request's `clock` is read. */
  readonly clock?: number;
};

/**
 * The host side of an execution. The driver delivers outcomes to the guest one at a time, in the order the
 * returned promises settle; this is how the durable layer dictates the delivery order on replay.
 */
export interface ExecutionHost {
  call(call: HostCall, signal: AbortSignal): Promise<HostOutcome>;
  onLog?(entry: LogEntry): void;
  /**
   * Called once when the request has a `replay` script, as the driver hands the script's last outcome to the
   * guest (at start when the script is empty): every log line and call the host receives after it is live.
   * Not called when the execution ends before the script is through.
   */
  onReplayDone?(): void;
}

/**
 * One recorded call of a replay script (see `ExecutionRequest.replay`), in the journal's wire form.
 */
export interface ReplayStep {
  /** The id the driver gave the call (`HostCall.callId`). */
  readonly callId: string;
  /** `namespace.name` of a tool, or `timer`. */
  readonly tool: string;
  /** A tool's arguments as the driver's wire text (`HostCall.argsJson`); a timer's delay as `String(delayMs)`. */
  readonly args: string;
  readonly ok: boolean;
  /** Tagged JSON of the value when `ok`, else the JSON of a `SerializedError`. */
  readonly payload: string;
  /** The guest's clock (epoch ms) from this delivery on. */
  readonly clock: number;
}

/** What a program may reach beyond its tools; drivers enforce what applies to them (quickjs reaches nothing). */
export interface SandboxPolicy {
  /** Top-level modules the program may import (Python); undefined means any the sandbox has. */
  readonly allowedLibraries?: readonly string[];
  /** Whether the program may start processes (Python); off by default. */
  readonly allowSubprocesses?: boolean;
  /** Executables the program may not start even when processes are allowed (by name or path). */
  readonly blockedCommands?: readonly string[];
}

/** A file in the program's working directory: an input before it runs, an artifact after. */
export interface WorkspaceFile {
  /** Relative path (`data.csv`, `out/chart.svg`): no `..`, no leading `/`. */
  readonly name: string;
  readonly data: Uint8Array;
}

export interface ExecutionRequest {
  readonly code: string;
  readonly policy?: SandboxPolicy;
  /** Placed in the working directory before the program starts (drivers with a file system). */
  readonly files?: readonly WorkspaceFile[];
  readonly language: GuestLanguage;
  /** Name shown in stack traces and error positions. */
  readonly filename?: string;
  readonly tools: readonly GuestToolBinding[];
  readonly host: ExecutionHost;
  readonly limits?: Partial<ExecutionLimits>;
  /** Seeds `Math.random` (and Python's `random`). */
  readonly seed?: number;
  /** Epoch milliseconds the guest sees; read at start and at each delivery. Default `Date.now`. */
  readonly clock?: () => number;
  /**
   * Recorded outcomes the driver serves itself, without asking the host (a driver without
   * `supportsReplayScript` ignores this and the host is asked as usual). Steps are in delivery order. A guest
   * call whose id is a step's `callId` and whose `tool` and `args` equal the step's is answered by that step;
   * the outcome at position k is delivered once positions < k have been and its call has been issued. A step
   * whose call is issued with another tool or other arguments is dropped and that call goes to the host. Every
   * other call goes to `host.call` as usual, but host outcomes are delivered only after the whole script (they
   * come later in delivery order). A scripted delivery sets the guest clock to the step's `clock` and counts
   * like any call (`maxToolCalls`, `resources.toolCalls`); it takes no `maxConcurrentToolCalls` slot (nothing
   * runs on the host). Call ids are unique.
   */
  readonly replay?: readonly ReplayStep[];
  /**
   * Asks a driver that can (`keepsPausedVms`) to keep the guest's VM when the execution is aborted for a pause
   * (`PAUSED_VM_CODES`) between guest turns, if its image is at most `maxBytes`: the failed result's `paused`.
   */
  readonly keepPausedVm?: { readonly maxBytes: number };
  /**
   * Resumes this kept VM instead of running the program from its start (ADR 0056): the caller has checked that
   * the journal is what it was when the VM paused. The calls it lists as out are issued again, with their ids;
   * `replay` is ignored.
   */
  readonly resumeFrom?: PausedVm;
}

/** Abort codes on which a driver may keep the paused VM (`ExecutionRequest.keepPausedVm`). */
export const PAUSED_VM_CODES: ReadonlySet<string> = new Set([
  'PAUSED',
  'APPROVAL_REQUIRED',
  'AWAITING_INPUT',
]);

/** A paused execution's VM as its driver kept it (`ExecutionRequest.keepPausedVm`); opaque but for these fields. */
export interface PausedVm {
  /** `SandboxDriver.engine` of the driver that kept it: only that driver resumes it. */
  readonly engine: string;
  /** What it holds in memory (its image). */
  readonly bytes: number;
  /** Calls the guest had issued and was not answered when it paused (`HostCall.callId`), in issue order. */
  readonly outCalls: readonly string[];
  /** Calls the guest had issued in all (`ExecutionResources.toolCalls`). */
  readonly toolCalls: number;
  /** The driver's own state. */
  readonly state: unknown;
}

export interface ExecutionResources {
  readonly wallMs: number;
  /** Time spent inside the guest's interpreter (its computing, not its waiting), when the driver measures it. */
  readonly cpuMs?: number;
  /**
   * Calls the guest issued, tool calls and timers, scripted ones included. A driver numbers them itself: their
   * ids are `call-1`, `call-2`, ... in issue order (a guest-chosen id is at most a correlation token, checked
   * against that number), so a journaled call-N with N past this count was not asked for again.
   */
  readonly toolCalls: number;
  readonly memoryBytes: number;
}

export type ExecutionResult =
  | {
      readonly status: 'succeeded';
      readonly value: unknown;
      readonly logs: readonly LogEntry[];
      readonly resources: ExecutionResources;
      /** Files the program wrote or changed in its working directory. */
      readonly artifacts?: readonly WorkspaceFile[];
    }
  | {
      readonly status: 'failed';
      /** `line` and `column` (1-based) place the error in the program as written, when the driver knows them. */
      readonly error: SerializedError & { readonly line?: number; readonly column?: number };
      readonly logs: readonly LogEntry[];
      readonly resources: ExecutionResources;
      readonly artifacts?: readonly WorkspaceFile[];
      /** The VM as it paused, when the request asked to keep it and the driver could. */
      readonly paused?: PausedVm;
    };

export interface ExecuteOptions {
  /** Aborting interrupts the execution promptly; the abort reason's `code` (if any) becomes the error code. */
  readonly signal?: AbortSignal;
}

/**
 * A sandbox driver runs untrusted programs. `execute` always resolves: guest failures, limits and crashes
 * come back as a failed result with a stable code. It rejects only when the driver is closed.
 */
export interface SandboxDriver {
  readonly name: string;
  readonly apiVersion: typeof SANDBOX_DRIVER_API_VERSION;
  /** The engine and its version (e.g. `quickjs-wasi@3.7.0`); a journal is replayed only on the engine that wrote it. */
  readonly engine: string;
  readonly languages: readonly GuestLanguage[];
  /** Serves `ExecutionRequest.replay` itself (inside the sandbox's thread or process); without it, no script. */
  readonly supportsReplayScript?: boolean;
  /** Keeps paused VMs on request and resumes them (`ExecutionRequest.keepPausedVm`, `resumeFrom`). */
  readonly keepsPausedVms?: boolean;
  /** Resolves when the driver can start executions without paying its start-up (workers, warm pools). */
  ready(): Promise<void>;
  execute(request: ExecutionRequest, options?: ExecuteOptions): Promise<ExecutionResult>;
  close(): Promise<void>;
}

/**
 * Timings a driver reports about its sandboxes (metrics). Optional for a driver; an observer's failure is its own.
 * A VM made ahead of use (a warm pool) reports its creation when the execution that used it ends.
 */
export interface SandboxObserver {
  /** Seconds spent creating the VM (or process) that ran one execution. */
  readonly sandboxCreated?: (seconds: number) => void;
  /** Seconds spent tearing it down after the execution. */
  readonly sandboxDestroyed?: (seconds: number) => void;
}
