// Durable-task benchmarks (issue 3): journal appends per second (one task, and many tasks at once: group commit,
// ADR 0009), resume latency against the number of journaled calls, pause latency. Runs the built package (dist/).
// Usage: npm run bench:durable
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createQuickJsDriver, createSqliteTaskStore } from '../dist/internal.js';
import type { Lease, TaskStore } from '../dist/internal.js';
import { createResumeBench } from './durable-resume.ts';
import { median, percentile } from './stats.ts';

const QUICK = process.env.BENCH_QUICK === '1';
const dir = await mkdtemp(join(tmpdir(), 'codecall-bench-durable-'));
const store: TaskStore = await createSqliteTaskStore({ path: join(dir, 'tasks.db') });
const driver = createQuickJsDriver({ workers: 2 });
await driver.ready();
const resumes = createResumeBench(store, driver);
const { runner } = resumes;

const TARGET_APPENDS_PER_SECOND = 20_000;
const ENTRY = {
  type: 'tool_outcome' as const,
  data: { call_id: 'call-1', ok: true, payload: '{"i":1}', clock: 0 },
};

/** Creates and claims `count` tasks for the append benchmarks. */
async function claimTasks(count: number): Promise<Lease[]> {
  const leases: Lease[] = [];
  for (let i = 0; i < count; i++) {
    const task = await store.createTask({ kind: 'code', code: 'return 1', language: 'javascript', seed: 1 });
    const lease = await store.claimTask('bench', { leaseMs: 60_000, taskId: task.id });
    if (!lease) throw new Error('could not claim a benchmark task');
    leases.push(lease);
  }
  return leases;
}

/**
 * `tasks` tasks, each appending one entry at a time and awaiting each (as one task's journal does): committed
 * entries per second over all of them.
 */
async function appendsPerSecond(tasks: number, perTask: number): Promise<number> {
  const leases = await claimTasks(tasks);
  const started = performance.now();
  await Promise.all(
    leases.map(async ({ taskId, fencingToken }) => {
      for (let i = 0; i < perTask; i++) await store.appendJournal(taskId, [ENTRY], { fencingToken });
    }),
  );
  const rate = ((tasks * perTask) / (performance.now() - started)) * 1000;
  for (const { taskId } of leases) {
    if ((await store.readJournal(taskId)).length !== perTask + 1) throw new Error(`${taskId}: entries lost`);
  }
  for (const lease of leases) await store.releaseLease(lease);
  return rate;
}

/** A task paused after `calls` journaled tool calls; returns the time `runTask` takes to finish it by replay. */
async function resumeLatency(calls: number): Promise<number> {
  return (await resumes.resume(calls)).ms;
}

async function pauseLatency(spin: boolean): Promise<number> {
  const code = spin ? 'while (true) {}' : 'await tools.hold(); return 1;';
  const task = await store.createTask({ kind: 'code', code, language: 'javascript', seed: 1 });
  const running = runner.runTask(task.id);
  await new Promise((r) => setTimeout(r, 30));
  const started = performance.now();
  runner.pause(task.id);
  const ended = await running;
  const ms = performance.now() - started;
  if (ended?.status !== 'paused') throw new Error(`expected paused, got ${ended?.status}`);
  return ms;
}

const CONCURRENT_TASKS = 64;
const ROUNDS = QUICK ? 1 : 3;
for (const [label, tasks, perTask] of [
  ['journal appends, one task', 1, QUICK ? 500 : 5_000],
  [`journal appends with ${CONCURRENT_TASKS} concurrent tasks`, CONCURRENT_TASKS, QUICK ? 20 : 500],
] as const) {
  const rates: number[] = [];
  for (let round = 0; round < ROUNDS; round++) rates.push(await appendsPerSecond(tasks, perTask));
  const rate = median(rates);
  const range = ROUNDS > 1 ? ` (${ROUNDS} runs: ${rates.map((r) => Math.round(r)).join(', ')})` : '';
  const ratio = (rate / TARGET_APPENDS_PER_SECOND).toFixed(2);
  console.log(
    `${label} (synchronous=FULL): ${Math.round(rate)} entries/s${range}, ${ratio}x the ${TARGET_APPENDS_PER_SECOND}/s target`,
  );
}
for (const calls of [0, 100, 1000]) {
  const samples: number[] = [];
  // Warm-up rounds first (JIT of the host and worker code paths), as a long-running service would be.
  for (let i = 0; i < 2; i++) await resumeLatency(calls);
  for (let i = 0; i < (QUICK ? 3 : 9); i++) samples.push(await resumeLatency(calls));
  samples.sort((a, b) => a - b);
  const target = 5 + 0.02 * calls;
  const p50 = percentile(samples, 50);
  console.log(
    `resume with ${calls} journaled calls: p50 ${p50.toFixed(1)} ms, p90 ${percentile(samples, 90).toFixed(1)} ms (target ${target} ms: ${p50 <= target ? 'met' : 'not met'})`,
  );
}
for (const spin of [true, false]) {
  const samples: number[] = [];
  for (let i = 0; i < (QUICK ? 5 : 30); i++) samples.push(await pauseLatency(spin));
  samples.sort((a, b) => a - b);
  console.log(
    `pause while ${spin ? 'the guest spins' : 'waiting on a tool'}: p50 ${percentile(samples, 50).toFixed(1)} ms, p99 ${percentile(samples, 99).toFixed(1)} ms`,
  );
}
await store.close();
await driver.close();
await rm(dir, { recursive: true, force: true });
