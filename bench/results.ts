/** The shape of bench/results/latest.json. */

export interface ColdStartResult {
  samples: number;
  p50Ms: number;
  p99Ms: number;
  meanMs: number;
  minMs: number;
  maxMs: number;
  /** Every sample in the order taken. */
  samplesMs: number[];
}

export interface ToolLoopResult {
  calls: number;
  /** Wall time of each execution, start to result, including its own start-up. */
  runsMs: number[];
  /** Calls per second of the median run. */
  callsPerSec: number;
}

export interface ThroughputWindow {
  executions: number;
  elapsedMs: number;
  perSec: number;
}

export interface ThroughputResult {
  concurrency: number;
  /** Executions per second of the median window. */
  perSec: number;
  windows: ThroughputWindow[];
}

export interface MemoryResult {
  live: number;
  rssBeforeBytes: number;
  rssLiveBytes: number;
  rssAfterReleaseBytes: number;
  /** Memory of child processes (PSS), for systems whose executions live outside this process. */
  externalLiveBytes: number;
  perExecutionMiB: number;
}

export type Outcome<T> =
  { status: 'ok'; value: T } | { status: 'skipped'; reason: string } | { status: 'error'; error: string };

export interface SystemResult {
  id: string;
  name: string;
  description: string;
  /** The whole system did not run (not installed, setup failed, process died). */
  unavailable?: string;
  /** CPU ticks the system's process used, its waited-for children included (Linux). */
  cpuTicks?: number;
  /** What else ran on the machine meanwhile (Linux). */
  interference?: { otherCpuShare: number; stealShare: number };
  /** BENCH_LOAD: the burners' share of the machine, asked for and achieved while this system was measured. */
  load?: { asked: number; achieved: number };
  coldStart: Outcome<ColdStartResult>;
  toolLoop: Outcome<ToolLoopResult>;
  throughput: Outcome<ThroughputResult[]>;
  memory: Outcome<MemoryResult>;
}

export interface Targets {
  coldStartP50Ratio: { value: number | null; target: string; pass: boolean };
  toolCallThroughputRatio: { value: number | null; target: string; pass: boolean };
  executionsPerSecRatioAt8: { value: number | null; target: string; pass: boolean };
  codecallMemoryPerLiveMiB: { value: number | null; target: string; pass: boolean };
}

export interface BenchReport {
  date: string;
  quick: boolean;
  /** The commit measured, with `+dirty` when src/ had uncommitted changes. */
  revision: string;
  machine: {
    cpus: number;
    cpuModel: string;
    node: string;
    platform: string;
    totalMemMiB: number;
    /** Share of the machine's CPU busy in the second before the run (Linux): other work skews every number. */
    busyBeforeShare: number | null;
  };
  systems: SystemResult[];
  targets: Targets;
  /** BENCH_LOAD: every system measured again beside the burners (load.ts), right after its quiet run. */
  loaded?: { share: number; systems: SystemResult[]; targets: Targets };
}
