import { setTimeout as sleep } from 'node:timers/promises';
import type { Sizes } from './config.ts';
import { LIVE_RESULT, TRIVIAL_RESULT, toolLoopResult } from './programs.ts';
import type {
  ColdStartResult,
  MemoryResult,
  ThroughputResult,
  ThroughputWindow,
  ToolLoopResult,
} from './results.ts';
import { MIB, mean, median, percentile } from './stats.ts';
import type { BenchSystem, HoldGate } from './system.ts';

function expect(system: BenchSystem, what: string, actual: unknown, expected: unknown): void {
  if (actual !== expected) {
    throw new Error(
      `${system.name}: ${what} returned ${JSON.stringify(actual)}, expected ${JSON.stringify(expected)}`,
    );
  }
}

/** 1. Sequential fresh executions of `return 1 + 1`, after a short warm-up. */
export async function measureColdStart(system: BenchSystem, sizes: Sizes): Promise<ColdStartResult> {
  for (let i = 0; i < sizes.coldWarmup; i++)
    expect(system, 'cold start', await system.coldStart(), TRIVIAL_RESULT);
  const samples: number[] = [];
  for (let i = 0; i < sizes.coldSamples; i++) {
    const start = performance.now();
    const value = await system.coldStart();
    samples.push(performance.now() - start);
    expect(system, 'cold start', value, TRIVIAL_RESULT);
  }
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    samples: samples.length,
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    meanMs: mean(samples),
    minMs: sorted[0] ?? Number.NaN,
    maxMs: sorted[sorted.length - 1] ?? Number.NaN,
    samplesMs: samples.map((x) => Math.round(x * 1000) / 1000),
  };
}

/** 2. Sequential tool round trips inside one execution; the median of a few runs. */
export async function measureToolLoop(system: BenchSystem, sizes: Sizes): Promise<ToolLoopResult> {
  const n = sizes.toolLoopN;
  const warm = Math.min(100, n);
  expect(system, 'tool loop warm-up', await system.toolLoop(warm), toolLoopResult(warm));
  const runsMs: number[] = [];
  for (let r = 0; r < sizes.toolLoopReps; r++) {
    const start = performance.now();
    const value = await system.toolLoop(n);
    runsMs.push(performance.now() - start);
    expect(system, 'tool loop', value, toolLoopResult(n));
  }
  return { calls: n, runsMs, callsPerSec: n / (median(runsMs) / 1000) };
}

/** Keeps `concurrency` executions in flight until `durationMs` has passed; each lane then finishes its last one. */
async function keepInFlight(
  system: BenchSystem,
  concurrency: number,
  durationMs: number,
): Promise<ThroughputWindow> {
  let executions = 0;
  const start = performance.now();
  const deadline = start + durationMs;
  const lane = async (): Promise<void> => {
    do {
      expect(system, 'trivial', await system.trivial(), TRIVIAL_RESULT);
      executions += 1;
    } while (performance.now() < deadline);
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  const elapsedMs = performance.now() - start;
  return { executions, elapsedMs, perSec: executions / (elapsedMs / 1000) };
}

/** 3. Trivial executions per second at each concurrency level. */
export async function measureThroughput(system: BenchSystem, sizes: Sizes): Promise<ThroughputResult[]> {
  const results: ThroughputResult[] = [];
  for (const concurrency of sizes.concurrency) {
    await keepInFlight(system, concurrency, sizes.trivialWarmupMs);
    const windows: ThroughputWindow[] = [];
    for (let w = 0; w < sizes.trivialWindows; w++)
      windows.push(await keepInFlight(system, concurrency, sizes.trivialDurationMs));
    results.push({ concurrency, perSec: median(windows.map((w) => w.perSec)), windows });
  }
  return results;
}

async function settle(): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  for (let i = 0; i < 2; i++) {
    gc?.();
    await sleep(100);
  }
}

/**
 * Live executions starting at once in the memory metric; each that parks lets the next start. All K at once made
 * every peer that starts a thread per execution (run) boot K threads side by side on two cores: none parked before
 * all had booted, and under load that took longer than the old fixed 120 s deadline ("0 of 200 reached the tool").
 * The reading is taken with all K parked either way.
 */
const LIVE_STARTING = 8;
const LIVE_STALL_MS = 120_000;

/** 4. Process RSS (all threads) plus child-process memory, per execution held live on a tool call. */
export async function measureMemory(system: BenchSystem, sizes: Sizes): Promise<MemoryResult> {
  const k = sizes.liveK;
  await system.prepareLive?.(k);
  const external = async (): Promise<number> =>
    system.externalMemoryBytes ? system.externalMemoryBytes() : 0;

  await settle();
  const rssBeforeBytes = process.memoryUsage().rss;
  const externalBefore = await external();

  let release!: () => void;
  let arrivedAll!: () => void;
  let arrivedCount = 0;
  let lastArrivalAt = performance.now();
  const allArrived = new Promise<void>((resolve) => (arrivedAll = resolve));
  const live: Promise<unknown>[] = [];
  const startNext = (): void => {
    if (live.length < k) live.push(system.liveExecution(gate));
  };
  const gate: HoldGate = {
    released: new Promise<void>((resolve) => (release = resolve)),
    arrived: () => {
      arrivedCount += 1;
      lastArrivalAt = performance.now();
      if (arrivedCount === k) arrivedAll();
      // Each parked execution lets the next one start (see LIVE_STARTING); not from inside its tool call, which
      // for a system that calls its tool synchronously (node:vm) would nest K executions in one stack.
      queueMicrotask(startNext);
    },
  };

  for (let i = 0; i < Math.min(k, LIVE_STARTING); i++) startNext();
  // Every execution is in `live` by the time the last one arrives (each arrival starts the next).
  const finished = allArrived.then(() => Promise.all(live));
  const failedEarly = (async () => {
    // Surfaces an execution that fails before it parks, instead of waiting for the timeout.
    for (let seen = 0; ;) {
      const batch = live.slice(seen);
      seen += batch.length;
      await Promise.all(batch);
      if (seen === live.length) break;
    }
    throw new Error(`${system.name}: live executions ended before being released`);
  })();
  const stopTimer = new AbortController();
  // A stall, not a total: what fails the metric is no execution parking for LIVE_STALL_MS.
  const timeout = (async () => {
    for (;;) {
      const wait = lastArrivalAt + LIVE_STALL_MS - performance.now();
      if (wait <= 0) break;
      await sleep(wait, undefined, { signal: stopTimer.signal });
    }
    throw new Error(
      `${system.name}: only ${arrivedCount} of ${k} executions reached the tool; none for ${LIVE_STALL_MS / 1000} s`,
    );
  })();
  failedEarly.catch(() => undefined);
  timeout.catch(() => undefined);
  try {
    await Promise.race([allArrived, failedEarly, timeout]);
  } catch (error) {
    release();
    await Promise.all(live.map((p) => p.catch(() => undefined)));
    throw error;
  } finally {
    stopTimer.abort();
  }

  await settle();
  const rssLiveBytes = process.memoryUsage().rss;
  const externalLiveBytes = (await external()) - externalBefore;

  release();
  const values = await finished;
  for (const value of values) expect(system, 'live execution', value, LIVE_RESULT);
  await settle();
  const rssAfterReleaseBytes = process.memoryUsage().rss;

  return {
    live: k,
    rssBeforeBytes,
    rssLiveBytes,
    rssAfterReleaseBytes,
    externalLiveBytes,
    perExecutionMiB: (rssLiveBytes - rssBeforeBytes + externalLiveBytes) / k / MIB,
  };
}
