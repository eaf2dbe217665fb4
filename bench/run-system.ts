/**
 * Measures one system in a process of its own, so no system's threads, heaps or child processes skew
 * another's numbers. The `speed` phase takes metrics 1-3; the `memory` phase runs in a fresh process of its
 * own, so garbage left by the speed metrics (freed but still mapped) cannot hide or inflate the live memory.
 * Usage: node --expose-gc --import tsx bench/run-system.ts <system-id> <speed|memory> <result.json>
 */
import { writeFile } from 'node:fs/promises';
import { DEFAULT_SIZES } from './config.ts';
import type { Sizes } from './config.ts';
import { measureColdStart, measureMemory, measureThroughput, measureToolLoop } from './metrics.ts';
import type { Outcome, SystemResult } from './results.ts';
import { processTicks } from './machine.ts';
import { MIB } from './stats.ts';
import type { BenchSystem, MetricName, Phase } from './system.ts';
import { describe } from './system.ts';
import { SYSTEMS } from './systems/index.ts';

/** A peer may ask for smaller sizes; it never gets bigger ones than the run's. */
function sizesFor(system: BenchSystem): Sizes {
  const sizes: Sizes = { ...DEFAULT_SIZES };
  for (const [key, value] of Object.entries(system.sizes ?? {})) {
    const k = key as keyof Sizes;
    if (typeof value === 'number' && typeof sizes[k] === 'number')
      (sizes as unknown as Record<string, number>)[k] = Math.min(value, sizes[k]);
  }
  return sizes;
}

async function attempt<T>(
  system: BenchSystem,
  metric: MetricName,
  work: () => Promise<T>,
  show: (v: T) => string,
): Promise<Outcome<T>> {
  const reason = system.skip?.[metric];
  if (reason !== undefined) {
    console.log(`[${system.name}] ${metric}: skipped (${reason})`);
    return { status: 'skipped', reason };
  }
  try {
    const value = await work();
    console.log(`[${system.name}] ${metric}: ${show(value)}`);
    return { status: 'ok', value };
  } catch (error) {
    console.log(`[${system.name}] ${metric}: ERROR ${describe(error)}`);
    return { status: 'error', error: describe(error) };
  }
}

function unavailable(id: string, name: string, why: string): SystemResult {
  const skipped = { status: 'skipped', reason: why } as const;
  return {
    id,
    name,
    description: '',
    unavailable: why,
    coldStart: skipped,
    toolLoop: skipped,
    throughput: skipped,
    memory: skipped,
  };
}

/** Executions run before the memory phase measures its baseline, so the baseline is warm. */
const MEMORY_WARMUP = 10;

async function measure(id: string, phase: Phase): Promise<SystemResult> {
  const entry = SYSTEMS.find((s) => s.id === id);
  if (!entry) throw new Error(`unknown system ${id}`);
  const system = await entry.load();
  if (typeof system === 'string') {
    console.log(`[${id}] skipped: ${system}`);
    return unavailable(id, id, system);
  }
  console.log(`[${system.name}] ${system.description}`);
  try {
    await system.setup();
  } catch (error) {
    console.log(`[${system.name}] setup failed: ${describe(error)}`);
    return unavailable(id, system.name, `setup failed: ${describe(error)}`);
  }
  const sizes = sizesFor(system);
  const ms = (v: number) => `${v.toFixed(2)} ms`;
  const notInPhase = {
    status: 'skipped',
    reason: `measured in the ${phase === 'speed' ? 'memory' : 'speed'} phase`,
  } as const;
  const result: SystemResult = {
    id,
    name: system.name,
    description: system.description,
    coldStart: notInPhase,
    toolLoop: notInPhase,
    throughput: notInPhase,
    memory: notInPhase,
  };
  if (phase === 'speed') {
    result.coldStart = await attempt(
      system,
      'coldStart',
      () => measureColdStart(system, sizes),
      (v) => `p50 ${ms(v.p50Ms)}, p99 ${ms(v.p99Ms)} (${v.samples} samples)`,
    );
    result.toolLoop = await attempt(
      system,
      'toolLoop',
      () => measureToolLoop(system, sizes),
      (v) => `${v.callsPerSec.toFixed(0)} calls/s (${v.calls} calls, runs ${v.runsMs.map(ms).join(', ')})`,
    );
    result.throughput = await attempt(
      system,
      'trivial',
      () => measureThroughput(system, sizes),
      (v) => v.map((t) => `c=${t.concurrency}: ${t.perSec.toFixed(0)}/s`).join(', '),
    );
  } else {
    result.memory = await attempt(
      system,
      'memory',
      async () => {
        for (let i = 0; i < MEMORY_WARMUP; i++) await system.trivial();
        return measureMemory(system, sizes);
      },
      (v) =>
        `${v.perExecutionMiB.toFixed(3)} MiB per live execution (${v.live} live, RSS ${(v.rssBeforeBytes / MIB).toFixed(0)} -> ${(v.rssLiveBytes / MIB).toFixed(0)} MiB, after release ${(v.rssAfterReleaseBytes / MIB).toFixed(0)} MiB${v.externalLiveBytes ? `, children ${(v.externalLiveBytes / MIB).toFixed(0)} MiB` : ''})`,
    );
  }
  try {
    await system.teardown();
  } catch (error) {
    console.log(`[${system.name}] teardown failed: ${describe(error)}`);
  }
  return result;
}

const [id, phase, out] = process.argv.slice(2);
if (id === undefined || (phase !== 'speed' && phase !== 'memory') || out === undefined) {
  console.error('usage: run-system.ts <system-id> <speed|memory> <result.json>');
  process.exit(2);
}
try {
  const result = await measure(id, phase);
  const ticks = processTicks(true);
  await writeFile(out, JSON.stringify(ticks === null ? result : { ...result, cpuTicks: ticks }));
  // Peers may leave pooled worker threads or timers behind; the measurement is over.
  process.exit(0);
} catch (error) {
  console.error(`[${id}] crashed: ${describe(error)}`);
  process.exit(1);
}
