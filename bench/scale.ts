// Issue 26 goal 5: how a task's costs grow with its size. Two sweeps over one task shape (n sequential
// `await tools.blob({ i, size })`, then `await tools.hold()`, then `return 1`):
//   - journal length: n = 10, 1,000, 10,000, 100,000 calls with 10-byte results;
//   - result size: 10 B, 1 KiB, 10 KiB, 100 KiB results with n = 100 calls.
// Each point measures the live run (runTask until `hold` starts: every call journaled and answered), tool calls/s,
// then the resume (the task paused at `hold`, runTask again: claim, journal read, replay of n outcomes, `hold`
// live, result committed) in wall time and CPU time of the process (both threads; the machine is shared, so CPU
// time is the steadier figure), and the peak RSS and main-thread heap above what they were before the step.
// The growth exponent between neighbouring points, log(cost ratio) / log(size ratio), says linear (1) or better
// (< 1) or worse. Writes docs/scale-curves.svg (log-log curves) and prints the tables as markdown.
// Usage: npm run bench:scale  (BENCH_QUICK=1: up to 10,000 calls and 10 KiB, one sample a point)
import { existsSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createQuickJsDriver,
  createSqliteTaskStore,
  defineTool,
  TaskRunner,
  ToolRegistry,
} from '../dist/internal.js';
import type { TaskStore } from '../dist/internal.js';
import { createHoldTool } from './hold-tool.ts';
import { scaleSvg } from './scale-plot.ts';
import type { Curve } from './scale-plot.ts';
import { median, MIB } from './stats.ts';

const QUICK = process.env.BENCH_QUICK === '1';
const LENGTHS = QUICK ? [10, 1_000, 10_000] : [10, 1_000, 10_000, 100_000];
const SIZES = QUICK ? [10, 1024, 10 * 1024] : [10, 1024, 10 * 1024, 100 * 1024];
const SIZE_SWEEP_CALLS = 100;
/** Samples per point: fewer where one sample is long. */
const samplesFor = (calls: number): number => (QUICK ? 1 : calls >= 100_000 ? 1 : calls >= 10_000 ? 2 : 5);

// The SQLite file on tmpfs when there is one: fsync is then free, so what grows is the work, not the shared disk's
// latency (a live call is two fsync'd commits; bench:durable measures them on disk). BENCH_SCALE_DIR overrides.
const base = process.env.BENCH_SCALE_DIR ?? (existsSync('/dev/shm') ? '/dev/shm' : tmpdir());
const dir = await mkdtemp(join(base, 'codecall-bench-scale-'));
const store: TaskStore = await createSqliteTaskStore({ path: join(dir, 'tasks.db') });
const driver = createQuickJsDriver({ workers: 2 });
await driver.ready();

const hold = createHoldTool();
const results = new Map<number, string>();
const blob = defineTool({
  name: 'blob',
  description: '',
  effect: 'read',
  execute: (args) => {
    const size = (args as { size: number }).size;
    let text = results.get(size);
    if (text === undefined) results.set(size, (text = 'x'.repeat(size - 2))); // a JSON string of `size` bytes
    return text;
  },
});
const runner = new TaskRunner({
  store,
  driver,
  tools: new ToolRegistry([blob, hold.tool]),
  owner: 'bench',
  leaseMs: 120_000,
});

/** Peak RSS and main-thread heap while `work` runs, above their values when it started (sampled every 5 ms). */
async function measured<T>(
  work: () => Promise<T>,
): Promise<{ value: T; ms: number; cpuMs: number; rssMiB: number; heapMiB: number }> {
  (globalThis as { gc?: () => void }).gc?.();
  const base = process.memoryUsage();
  let rss = base.rss;
  let heap = base.heapUsed;
  const sample = (): void => {
    const now = process.memoryUsage();
    rss = Math.max(rss, now.rss);
    heap = Math.max(heap, now.heapUsed);
  };
  const timer = setInterval(sample, 5);
  const cpu = process.cpuUsage();
  const started = performance.now();
  try {
    const value = await work();
    sample();
    const used = process.cpuUsage(cpu);
    return {
      value,
      ms: performance.now() - started,
      cpuMs: (used.user + used.system) / 1000,
      rssMiB: (rss - base.rss) / MIB,
      heapMiB: (heap - base.heapUsed) / MIB,
    };
  } finally {
    clearInterval(timer);
  }
}

interface Sample {
  liveMs: number;
  liveCpuMs: number;
  liveRssMiB: number;
  resumeMs: number;
  resumeCpuMs: number;
  resumeRssMiB: number;
  resumeHeapMiB: number;
}

/** One task of `calls` calls with `size`-byte results: its live run, then its resume. */
async function sample(calls: number, size: number): Promise<Sample> {
  const task = await store.createTask({
    kind: 'code',
    code: `for (let i = 0; i < ${calls}; i++) await tools.blob({ i, size: ${size} }); await tools.hold(); return 1;`,
    language: 'javascript',
    seed: 1,
    limits: { maxToolCalls: calls + 10, timeoutMs: 3_600_000, memoryBytes: 256 * MIB },
  });
  let running: Promise<unknown> | undefined;
  const live = await measured(async () => {
    const holdStarted = hold.started();
    running = runner.runTask(task.id);
    await Promise.race([holdStarted, running]);
  });
  runner.pause(task.id);
  await running;
  const paused = await store.getTask(task.id);
  if (paused?.status !== 'paused') throw new Error(`expected paused, got ${paused?.status}`);
  await store.updateTask(task.id, { status: 'pending' }, { expectedVersion: paused.version });
  hold.holding = false;
  const resumed = await measured(() => runner.runTask(task.id));
  hold.holding = true;
  if (resumed.value?.status !== 'succeeded') throw new Error(`resume ended ${resumed.value?.status}`);
  return {
    liveMs: live.ms,
    liveCpuMs: live.cpuMs,
    liveRssMiB: live.rssMiB,
    resumeMs: resumed.ms,
    resumeCpuMs: resumed.cpuMs,
    resumeRssMiB: resumed.rssMiB,
    resumeHeapMiB: resumed.heapMiB,
  };
}

interface Point extends Sample {
  calls: number;
  size: number;
  callsPerSecond: number;
}

async function point(calls: number, size: number): Promise<Point> {
  const samples: Sample[] = [];
  for (let i = 0; i < samplesFor(calls); i++) samples.push(await sample(calls, size));
  const m = (k: keyof Sample): number => median(samples.map((s) => s[k]));
  const liveMs = m('liveMs');
  return {
    calls,
    size,
    liveMs,
    liveCpuMs: m('liveCpuMs'),
    liveRssMiB: m('liveRssMiB'),
    resumeMs: m('resumeMs'),
    resumeCpuMs: m('resumeCpuMs'),
    resumeRssMiB: m('resumeRssMiB'),
    resumeHeapMiB: m('resumeHeapMiB'),
    callsPerSecond: (calls / liveMs) * 1000,
  };
}

/** log(cost ratio) / log(size ratio) from the previous point: 1 is linear, below it better. */
const exponent = (cost: number, prevCost: number, x: number, prevX: number): string =>
  cost > 0 && prevCost > 0 ? (Math.log(cost / prevCost) / Math.log(x / prevX)).toFixed(2) : '–';

function table(title: string, points: readonly Point[], x: (p: Point) => number, label: string): string {
  const rows = [
    `${title}`,
    '',
    `| ${label} | tool calls/s (live) | live CPU ms | resume p50 ms | resume CPU ms | exp. (resume CPU) | resume RSS peak MiB | resume heap peak MiB | live RSS peak MiB |`,
    '| --: | --: | --: | --: | --: | --: | --: | --: | --: |',
  ];
  points.forEach((p, i) => {
    const prev = points[i - 1];
    const exp = prev ? exponent(p.resumeCpuMs, prev.resumeCpuMs, x(p), x(prev)) : '';
    rows.push(
      `| ${x(p).toLocaleString('en-US')} | ${Math.round(p.callsPerSecond).toLocaleString('en-US')} | ${p.liveCpuMs.toFixed(0)} | ${p.resumeMs.toFixed(1)} | ${p.resumeCpuMs.toFixed(1)} | ${exp} | ${p.resumeRssMiB.toFixed(1)} | ${p.resumeHeapMiB.toFixed(1)} | ${p.liveRssMiB.toFixed(1)} |`,
    );
  });
  return rows.join('\n');
}

const load = (): string =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
console.log(
  `scale bench, ${new Date().toISOString()}, node ${process.version}, SQLite in ${base}, load before ${load()}`,
);
// Warm-up (JIT of host and worker paths), as a long-running service would be.
for (let i = 0; i < 2; i++) await sample(100, 10);

const byLength: Point[] = [];
for (const calls of LENGTHS) {
  byLength.push(await point(calls, 10));
  console.error(`  ${calls} calls done (load ${load()})`);
}
const bySize: Point[] = [];
for (const size of SIZES) {
  bySize.push(await point(SIZE_SWEEP_CALLS, size));
  console.error(`  ${size} B results done (load ${load()})`);
}
console.log(table('By journal length (10-byte results):', byLength, (p) => p.calls, 'calls'));
console.log();
console.log(table(`By result size (${SIZE_SWEEP_CALLS} calls):`, bySize, (p) => p.size, 'result bytes'));
console.log(`\nload after ${load()}`);

const curves = (points: readonly Point[], x: (p: Point) => number): Curve[] => [
  { name: 'live run, CPU ms', points: points.map((p) => [x(p), p.liveCpuMs]) },
  { name: 'resume, CPU ms', points: points.map((p) => [x(p), p.resumeCpuMs]) },
  { name: 'resume, wall ms', points: points.map((p) => [x(p), p.resumeMs]) },
  // The main thread's heap: RSS moves by whole regions the allocator keeps, so its peak above the start is noisy.
  {
    name: 'resume, main-thread heap peak MiB',
    points: points.map((p) => [x(p), Math.max(p.resumeHeapMiB, 0.01)]),
  },
];
const svg = scaleSvg([
  { title: 'by journal length (calls, 10 B results)', curves: curves(byLength, (p) => p.calls) },
  { title: `by result size (bytes, ${SIZE_SWEEP_CALLS} calls)`, curves: curves(bySize, (p) => p.size) },
]);
if (!QUICK) {
  const out = new URL('../docs/scale-curves.svg', import.meta.url);
  writeFileSync(out, svg);
  console.log(`wrote ${out.pathname}`);
}
await store.close();
await driver.close();
await rm(dir, { recursive: true, force: true });
