// What the dashboard's read costs (TaskStore.readStats, ADR 0054) on SQLite, and that it stays bounded as the
// store grows: a store with SMALL tasks that ended in the last hour (each after 3 journaled tool calls) and then
// with BIG, plus as many queued; at each size the median of ROUNDS reads of readStats, beside the console's task
// list read (listTasks: the newest 1000, summarised) in the same run, and their ratio.
//
// Usage: node --import tsx bench/stats-overview.ts (after tsc -p tsconfig.build.json; BENCH_QUICK=1: smaller;
// BENCH_POSTGRES_URL=postgres://...: on PostgreSQL, in a schema of its own).
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPostgresTaskStore, createSqliteTaskStore } from '../dist/internal.js';
import type { JournalEntryInput, TaskInput } from '../dist/internal.js';
import { median } from './stats.ts';

const QUICK = process.env.BENCH_QUICK === '1';
const SMALL = QUICK ? 500 : 2000;
const BIG = QUICK ? 5000 : 20_000;
const ROUNDS = QUICK ? 5 : 15;

const input: TaskInput = { kind: 'code', code: 'return 1', language: 'javascript', seed: 1 };
const PG = process.env.BENCH_POSTGRES_URL;
const dir = await mkdtemp(join(tmpdir(), 'codecall-bench-stats-'));
const store = PG
  ? await createPostgresTaskStore({ url: PG, schema: `bench_stats_${process.pid}` })
  : await createSqliteTaskStore({ path: join(dir, 'tasks.db') });

async function addTasks(n: number): Promise<void> {
  const now = Date.now();
  for (let i = 0; i < n; i++) {
    const tenant = `t${i % 10}`;
    const task = await store.createTask(input, { now: now - 1000, attributes: { tenant } });
    const lease = await store.claimTask('bench', { leaseMs: 60_000, taskId: task.id, now: now - 1000 });
    const fencingToken = lease?.fencingToken ?? -1;
    const entries: JournalEntryInput[] = [];
    for (let c = 1; c <= 3; c++) {
      entries.push({
        type: 'tool_intent',
        data: { call_id: `call-${c}`, tool: 'tools.ping', args: `{"i":${c}}` },
      });
      entries.push({ type: 'tool_outcome', data: { call_id: `call-${c}`, ok: true, payload: `${c}` } });
    }
    await store.appendJournal(task.id, entries, { fencingToken, now: now - 500 });
    await store.updateTask(
      task.id,
      i % 7 === 0
        ? { status: 'failed', error: { code: 'TOOL_FAILED', message: 'no' } }
        : { status: 'succeeded', result: '1' },
      { fencingToken, now: now - 100 },
    );
  }
  for (let i = 0; i < n; i += 1000) {
    const size = Math.min(1000, n - i);
    await store.createBatch(
      Array.from({ length: size }, () => ({ input })),
      { tenant: `t${(i / 1000) % 10}` },
    );
  }
}

async function time(fn: () => Promise<unknown>): Promise<number> {
  const times: number[] = [];
  await fn();
  for (let r = 0; r < ROUNDS; r++) {
    const t = performance.now();
    await fn();
    times.push(performance.now() - t);
  }
  return median(times);
}

const rows: string[] = [];
let have = 0;
for (const size of [SMALL, BIG]) {
  await addTasks(size - have);
  have = size;
  const since = Date.now() - 3_600_000;
  const stats = await time(() => store.readStats({ since }));
  const list = await time(() => store.listTasks({ limit: 1000, order: 'newest', summarised: true }));
  const one = await store.readStats({ since });
  rows.push(
    `| ${size.toLocaleString('en')} ended + ${size.toLocaleString('en')} queued | ${stats.toFixed(1)} ms | ` +
      `${list.toFixed(1)} ms | ${(stats / list).toFixed(2)}x | ${one.ended.length} / ${one.toolCalls.length} | ` +
      `${one.capped.ended || one.capped.toolCalls ? 'yes' : 'no'} |`,
  );
}
console.log(
  `${PG ? 'PostgreSQL' : 'SQLite'}, node ${process.version}, ${os.cpus().length} cores, load ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`,
);
console.log('| store | readStats | listTasks (1000) | ratio | ended / calls read | capped |');
console.log('| ----- | --------: | ---------------: | ----: | -----------------: | -----: |');
for (const r of rows) console.log(r);
await store.close();
await rm(dir, { recursive: true, force: true });
