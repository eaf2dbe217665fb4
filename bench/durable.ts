// Durable-task benchmarks (issue 3): journal appends per second, resume latency against the number of journaled
// calls, pause latency. Runs the built package (dist/). Usage: npm run bench:durable
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createQuickJsDriver,
  createSqliteTaskStore,
  defineTool,
  TaskRunner,
  ToolRegistry,
} from '../dist/index.js';
import type { TaskStore } from '../dist/index.js';
import { percentile } from './stats.ts';

const QUICK = process.env.BENCH_QUICK === '1';
const dir = await mkdtemp(join(tmpdir(), 'codecall-bench-durable-'));
const store: TaskStore = await createSqliteTaskStore({ path: join(dir, 'tasks.db') });
const driver = createQuickJsDriver({ workers: 2 });
await driver.ready();
let holding = true;
const echo = defineTool({ name: 'echo', description: '', effect: 'read', execute: (a) => a });
// Waits until aborted (as a well-behaved tool does when its execution is paused), unless holding is off.
const hold = defineTool({
  name: 'hold',
  description: '',
  effect: 'read',
  execute: (_args, ctx) =>
    holding
      ? new Promise<string>((_resolve, reject) =>
          ctx.signal.addEventListener('abort', () => reject(new Error('aborted'))),
        )
      : 'released',
});
const tools = new ToolRegistry([echo, hold]);
const runner = new TaskRunner({ store, driver, tools, owner: 'bench', leaseMs: 30_000 });

async function appendsPerSecond(): Promise<number> {
  const task = await store.createTask({ kind: 'code', code: 'return 1', language: 'javascript', seed: 1 });
  const lease = await store.claimTask('bench', { leaseMs: 60_000 });
  if (!lease || lease.taskId !== task.id) throw new Error('could not claim the benchmark task');
  const n = QUICK ? 500 : 5_000;
  const entry = {
    type: 'tool_outcome' as const,
    data: { call_id: 'call-1', ok: true, payload: '{"i":1}', clock: 0 },
  };
  const started = performance.now();
  for (let i = 0; i < n; i++)
    await store.appendJournal(task.id, [entry], { fencingToken: lease.fencingToken });
  const singles = (n / (performance.now() - started)) * 1000;
  await store.releaseLease(lease);
  return singles;
}

/** A task paused after `calls` journaled tool calls; returns the time `runTask` takes to finish it by replay. */
async function resumeLatency(calls: number): Promise<number> {
  const code = `for (let i = 0; i < ${calls}; i++) await tools.echo({ i }); await tools.hold(); return 1;`;
  const task = await store.createTask({ kind: 'code', code, language: 'javascript', seed: 1 });
  const running = runner.runTask(task.id);
  while ((await store.readJournal(task.id)).filter((e) => e.type === 'tool_intent').length < calls + 1) {
    await new Promise((r) => setTimeout(r, 2));
  }
  runner.pause(task.id);
  await running;
  const paused = await store.getTask(task.id);
  if (paused?.status !== 'paused') throw new Error(`expected paused, got ${paused?.status}`);
  await store.updateTask(task.id, { status: 'pending' }, { expectedVersion: paused.version });
  holding = false;
  const started = performance.now();
  const done = await runner.runTask(task.id); // replays `calls` outcomes, then runs `hold` live
  holding = true;
  if (done?.status !== 'succeeded') throw new Error(`resume ended ${done?.status}`);
  return performance.now() - started;
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

const appends = await appendsPerSecond();
console.log(
  `journal appends (one committed entry per transaction, synchronous=FULL): ${Math.round(appends)}/s`,
);
for (const calls of [0, 100, 1000]) {
  const samples: number[] = [];
  for (let i = 0; i < (QUICK ? 2 : 5); i++) samples.push(await resumeLatency(calls));
  samples.sort((a, b) => a - b);
  console.log(`resume with ${calls} journaled calls: p50 ${percentile(samples, 50).toFixed(1)} ms`);
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
