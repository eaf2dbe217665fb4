import type { GuestToolBinding } from './tool.ts';

export const SANDBOX_DRIVER_API_VERSION = 1;

export type GuestLanguage = 'javascript' | 'typescript' | 'python';

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
      /** Stable across replays and restarts (`task:block:call`); set by the durable layer. */
      readonly idempotencyKey?: string;
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
}

export interface ExecutionRequest {
  readonly code: string;
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
}

export interface ExecutionResources {
  readonly wallMs: number;
  /** Time spent inside the guest's interpreter (its computing, not its waiting), when the driver measures it. */
  readonly cpuMs?: number;
  readonly toolCalls: number;
  readonly memoryBytes: number;
}

export type ExecutionResult =
  | {
      readonly status: 'succeeded';
      readonly value: unknown;
      readonly logs: readonly LogEntry[];
      readonly resources: ExecutionResources;
    }
  | {
      readonly status: 'failed';
      readonly error: SerializedError & { readonly line?: number };
      readonly logs: readonly LogEntry[];
      readonly resources: ExecutionResources;
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
  /** Resolves when the driver can start executions without paying its start-up (workers, warm pools). */
  ready(): Promise<void>;
  execute(request: ExecutionRequest, options?: ExecuteOptions): Promise<ExecutionResult>;
  close(): Promise<void>;
}
