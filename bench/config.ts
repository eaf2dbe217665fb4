/** Benchmark sizes. `BENCH_QUICK=1` shrinks everything for a smoke run. */
export const QUICK = process.env.BENCH_QUICK === '1';

export interface Sizes {
  /** Sequential warm-up executions before the cold-start samples. */
  coldWarmup: number;
  /** Cold-start samples. */
  coldSamples: number;
  /** Tool calls in one execution of the tool-loop program. */
  toolLoopN: number;
  /** Repetitions of the tool loop; the median is reported. */
  toolLoopReps: number;
  /** In-flight executions for the throughput metric. */
  concurrency: readonly number[];
  /** How long one measurement window keeps its executions in flight. */
  trivialDurationMs: number;
  /** Windows per concurrency level; the median is reported, the spread kept in the JSON. */
  trivialWindows: number;
  /** Warm-up time before each concurrency level. */
  trivialWarmupMs: number;
  /** Executions held live at once for the memory metric. */
  liveK: number;
}

export const DEFAULT_SIZES: Sizes = QUICK
  ? {
      coldWarmup: 5,
      coldSamples: 30,
      toolLoopN: 500,
      toolLoopReps: 1,
      concurrency: [1, 8, 64],
      trivialDurationMs: 300,
      trivialWindows: 1,
      trivialWarmupMs: 100,
      liveK: 20,
    }
  : {
      coldWarmup: 20,
      coldSamples: 200,
      toolLoopN: 5000,
      toolLoopReps: 3,
      concurrency: [1, 8, 64],
      trivialDurationMs: 1000,
      trivialWindows: 3,
      trivialWarmupMs: 300,
      liveK: 200,
    };

/** Workers for every system that has a worker pool: one per core on the 2-core benchmark machine. */
export const WORKERS = 2;

/** Upper bound on one system's whole run before run-all gives up on it. */
export const SYSTEM_TIMEOUT_MS = QUICK ? 3 * 60_000 : 15 * 60_000;
