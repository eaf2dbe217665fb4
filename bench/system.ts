import type { Sizes } from './config.ts';

export type MetricName = 'coldStart' | 'toolLoop' | 'trivial' | 'memory';

/** Metrics 1-3 run in one process, the memory metric in a fresh one. */
export type Phase = 'speed' | 'memory';

/**
 * Lets the benchmark hold live executions: the `echo` tool of a live execution calls `arrived()`
 * and then does not answer until `released` settles.
 */
export interface HoldGate {
  arrived(): void;
  readonly released: Promise<void>;
}

/** One system under test. Every method runs the shared program text from `programs.ts`. */
export interface BenchSystem {
  readonly name: string;
  /** How it is configured, printed with the results. */
  readonly description: string;
  /** Metrics this system does not take part in, with the reason printed in the report. */
  readonly skip?: Partial<Record<MetricName, string>>;
  /** Smaller sizes for slow peers. */
  readonly sizes?: Partial<Sizes>;
  setup(): Promise<void>;
  /** A fresh execution of `TRIVIAL`; resolves to its value. */
  coldStart(): Promise<unknown>;
  /** One execution of `toolLoop(n)`; resolves to its value. */
  toolLoop(n: number): Promise<unknown>;
  /** One execution of `TRIVIAL` for the throughput metric; resolves to its value. */
  trivial(): Promise<unknown>;
  /** Called once before the memory phase holds `k` executions live at once. */
  prepareLive?(k: number): Promise<void>;
  /** Starts an execution of `LIVE` whose `echo` tool parks on `gate`; resolves to its value. */
  liveExecution(gate: HoldGate): Promise<unknown>;
  /** Bytes held outside this process by live executions (child processes); 0 when none. */
  externalMemoryBytes?(): Promise<number>;
  teardown(): Promise<void>;
}

/** Thrown by a system when an execution ends in anything but success. */
export class ExecutionFailed extends Error {
  constructor(system: string, detail: unknown) {
    super(`${system}: execution failed: ${describe(detail)}`);
  }
}

export function describe(detail: unknown): string {
  if (detail instanceof Error) return `${detail.name}: ${detail.message}`;
  try {
    return JSON.stringify(detail);
  } catch {
    return String(detail);
  }
}

/** A FIFO limit on work in flight, for peers that reject rather than queue past their worker count. */
export class Semaphore {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly limit: number) {}

  async use<T>(work: () => Promise<T>): Promise<T> {
    if (this.active >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.active += 1;
    try {
      return await work();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.active -= 1;
    }
  }
}
