// PostgreSQL against SQLite (issue 20), in one run, as ratios. A durable cluster (fsync on) is started for the
// run, or BENCH_POSTGRES_URL is used. Store level: journal appends/s of one task stream (one append at a time, and
// 16 in flight), claim latency, resume of 1,000 journaled calls; across nodes: control latency (a pause asked on
// one node until the run on another has paused); service level (BENCH_SERVICE!=0): tasks accepted/s and
// completed/s with 1, 2 and 3 `codecall serve` nodes on PostgreSQL against 1 on SQLite. Beside the appends, what
// bounds them: the same appends over a Unix socket, and the floor of any client-server commit (a bare one-row INSERT
// committed on its own with node-pg, TCP and socket) against SQLite's append.
// Usage: npm run bench:postgres (BENCH_QUICK=1 for fewer rounds).
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  createPostgresTaskStore,
  createQuickJsDriver,
  createSqliteTaskStore,
  TaskRunner,
  ToolRegistry,
} from '../dist/internal.js';
import type { TaskStore } from '../dist/internal.js';
import { startPostgresCluster } from '../test/support/postgres-cluster.ts';
import { createResumeBench } from './durable-resume.ts';
import { busyShare } from './machine.ts';
import { median, percentile } from './stats.ts';
import { serviceThroughput } from './postgres-service.ts';

const QUICK = process.env.BENCH_QUICK === '1';
const cluster = process.env.BENCH_POSTGRES_URL ? null : await startPostgresCluster({ durable: true });
const url = process.env.BENCH_POSTGRES_URL ?? cluster?.url ?? '';
const dir = await mkdtemp(join(os.tmpdir(), 'bench-postgres-'));
let schemas = 0;

const sqlite = (): Promise<TaskStore> =>
  createSqliteTaskStore({ path: join(dir, `s${++schemas}.db`), auditKey: null });
const postgres = (schema = `b${++schemas}`, at = url): Promise<TaskStore> =>
  createPostgresTaskStore({ url: at, schema });
// The cluster's socket directory is its data directory (the bench's own cluster), or BENCH_POSTGRES_SOCKET_URL.
const socketUrl =
  process.env.BENCH_POSTGRES_SOCKET_URL ??
  (cluster === null
    ? null
    : `postgres://postgres@localhost/postgres?host=${encodeURIComponent(cluster.dataDir)}&port=${new URL(url).port}`);

interface Row {
  readonly metric: string;
  readonly sqlite: number;
  readonly postgres: number;
  /** Higher is better (a rate) or lower (a latency). */
  readonly better: 'higher' | 'lower';
}
const rows: Row[] = [];
const report = (metric: string, s: number, p: number, better: Row['better']): void => {
  rows.push({ metric, sqlite: s, postgres: p, better });
  const ratio = better === 'higher' ? p / s : s / p;
  console.log(
    `${metric.padEnd(44)} sqlite ${fmt(s).padStart(10)}  postgres ${fmt(p).padStart(10)}  pg/sqlite ${ratio.toFixed(2)}x`,
  );
};
const fmt = (n: number): string => (n >= 100 ? n.toFixed(0) : n.toFixed(2));

async function claimed(store: TaskStore): Promise<{ id: string; token: number }> {
  const task = await store.createTask({ kind: 'code', code: 'return 1', language: 'javascript', seed: 1 });
  const lease = await store.claimTask('bench', { leaseMs: 600_000, taskId: task.id });
  if (lease === null) throw new Error('no lease');
  return { id: task.id, token: lease.fencingToken };
}

/** Appends/s of one task: `inFlight` appends of one entry outstanding at a time, for `ms`. */
async function appendsPerSecond(store: TaskStore, inFlight: number, ms: number): Promise<number> {
  const { id, token } = await claimed(store);
  let done = 0;
  let clock = 0;
  const end = performance.now() + ms;
  const lane = async (): Promise<void> => {
    while (performance.now() < end) {
      await store.appendJournal(id, [{ type: 'clock', data: { clock: clock++ } }], { fencingToken: token });
      done++;
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: inFlight }, lane));
  return (done * 1000) / (performance.now() - started);
}

/** The floor of a client-server commit: bare one-row INSERTs/s, each committed on its own, one at a time. */
async function bareCommitsPerSecond(at: string, ms: number): Promise<number> {
  const client = new pg.Client({ connectionString: at });
  await client.connect();
  try {
    const table = `bench_floor_${++schemas}`;
    await client.query(`CREATE TABLE ${table} (id bigserial PRIMARY KEY, v text NOT NULL)`);
    let done = 0;
    const started = performance.now();
    while (performance.now() - started < ms) {
      await client.query({ name: table, text: `INSERT INTO ${table} (v) VALUES ($1)`, values: [`${done}`] });
      done++;
    }
    return (done * 1000) / (performance.now() - started);
  } finally {
    await client.end();
  }
}

/** p50 and p99 of claimTask (with the service's caps) over `n` pending tasks. */
async function claimLatency(store: TaskStore, n: number): Promise<{ p50: number; p99: number }> {
  for (let i = 0; i < n; i++) {
    await store.createTask(
      { kind: 'code', code: 'return 1', language: 'javascript', seed: 1 },
      {
        attributes: { tenant: i % 2 === 0 ? 'a' : 'b' },
      },
    );
  }
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    const lease = await store.claimTask('bench', { leaseMs: 600_000, maxRunning: n + 1, tenantShare: n });
    samples.push(performance.now() - t);
    if (lease === null) throw new Error('nothing claimed');
  }
  samples.sort((a, b) => a - b);
  return { p50: percentile(samples, 50), p99: percentile(samples, 99) };
}

const driver = createQuickJsDriver({ workers: 2 });
await driver.ready();
try {
  console.log(`machine: ${os.cpus().length} cores, busy ${String(await busyShare(1000))} before the run`);
  const ms = QUICK ? 1000 : 3000;
  // Warm-up, discarded: a fresh cluster creates (zero-fills) its first WAL segments and the JIT is cold; a
  // service in its steady state recycles segments.
  for (const open of [sqlite, () => postgres()])
    await appendsPerSecond(await open(), 16, QUICK ? 2000 : 8000);
  for (const inFlight of [1, 16]) {
    const s = await appendsPerSecond(await sqlite(), inFlight, ms);
    const p = await appendsPerSecond(await postgres(), inFlight, ms);
    report(`journal appends/s, one task, ${inFlight} in flight`, s, p, 'higher');
    if (inFlight !== 1) continue;
    if (socketUrl !== null) {
      const viaSocket = await appendsPerSecond(await postgres(undefined, socketUrl), 1, ms);
      report('  the same, PostgreSQL over a Unix socket', s, viaSocket, 'higher');
    }
    report('  floor: bare INSERT + commit (node-pg, TCP)', s, await bareCommitsPerSecond(url, ms), 'higher');
    if (socketUrl !== null)
      report(
        '  floor: bare INSERT + commit (Unix socket)',
        s,
        await bareCommitsPerSecond(socketUrl, ms),
        'higher',
      );
  }
  const claims = QUICK ? 100 : 400;
  const cs = await claimLatency(await sqlite(), claims);
  const cp = await claimLatency(await postgres(), claims);
  report('claim latency p50 (ms)', cs.p50, cp.p50, 'lower');
  report('claim latency p99 (ms)', cs.p99, cp.p99, 'lower');
  const resumes: Record<string, number[]> = { sqlite: [], postgres: [] };
  for (const [name, open] of [
    ['sqlite', sqlite],
    ['postgres', () => postgres()],
  ] as const) {
    const bench = createResumeBench(await open(), driver);
    for (let i = 0; i < (QUICK ? 3 : 7); i++) resumes[name]?.push((await bench.resume(1000)).ms);
  }
  report(
    'resume of 1,000 journaled calls p50 (ms)',
    median(resumes.sqlite ?? []),
    median(resumes.postgres ?? []),
    'lower',
  );
  const control = await controlLatency(QUICK ? 10 : 30);
  console.log(
    `control latency across nodes (postgres): p50 ${control.p50.toFixed(1)} ms, p99 ${control.p99.toFixed(1)} ms (target p99 <= 100 ms)`,
  );
  if (process.env.BENCH_SERVICE !== '0') await serviceThroughput({ url, quick: QUICK, report });
} finally {
  await driver.close();
  await cluster?.stop();
  await rm(dir, { recursive: true, force: true });
}

/**
 * A pause asked on node B (its own pool and LISTEN connection) of a task spinning on node A, timed from the
 * request's commit to A's run having paused. A's control poll is a safety net of 1 s: only the signal is fast.
 */
async function controlLatency(rounds: number): Promise<{ p50: number; p99: number }> {
  const schema = `ctl${++schemas}`;
  const a = await postgres(schema);
  const b = await postgres(schema);
  const runner = new TaskRunner({ store: a, driver, tools: new ToolRegistry([]), owner: 'node-a' });
  const samples: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const task = await b.createTask({
      kind: 'code',
      code: 'let n = 0; while (true) n++;',
      language: 'javascript',
      seed: 1,
    });
    const run = runner.runTask(task.id);
    while ((await b.readJournal(task.id)).length < 5) await sleep(2);
    const asked = performance.now();
    await b.requestControl(task.id, 'pause');
    const ended = await run;
    samples.push(performance.now() - asked);
    if (ended?.status !== 'paused') throw new Error(`expected paused, got ${ended?.status}`);
  }
  await a.close();
  await b.close();
  samples.sort((x, y) => x - y);
  return { p50: percentile(samples, 50), p99: percentile(samples, 99) };
}
