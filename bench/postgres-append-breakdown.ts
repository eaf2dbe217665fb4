// Where the time of one PostgreSQL journal append goes (issue 20, ADR 0050), against the floor of any
// client-server commit (a bare one-row INSERT committed on its own with node-pg) and SQLite's append, in one run,
// rounds interleaved. Per operation: wall time, this process's CPU (node-pg, the store, the checksums), the
// cluster's CPU (every process of the bench's own cluster, from /proc: the backends, the WAL writer), round trips
// (statements sent), and from pg_stat_statements / pg_stat_user_functions the server's execution time of the
// append statement and of the chain trigger, and WAL bytes. CPU and server times are what a loaded machine
// distorts least: wall times there move with the run queue, not with codecall.
// Usage: npm run build && node --import tsx bench/postgres-append-breakdown.ts (BENCH_ROUNDS, BENCH_MS)
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { createPostgresTaskStore, createSqliteTaskStore } from '../dist/internal.js';
import type { TaskStore } from '../dist/internal.js';
import { findPostgresBin, startPostgresCluster } from '../test/support/postgres-cluster.ts';
import { median } from './stats.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const MS = Number(process.env.BENCH_MS ?? 2000);
const cluster = await startPostgresCluster({ durable: true });
const dir = await mkdtemp(join(os.tmpdir(), 'bench-append-'));

/** CPU ms of every process of the cluster (the postmaster and its children), from /proc. */
function clusterCpuMs(): number {
  const pid = Number(readFileSync(join(cluster.dataDir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
  const tick = 1000 / 100; // USER_HZ is 100 on Linux
  let ticks = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(entry) === pid || Number(fields[1]) === pid)
        ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // the process ended between the listing and the read
    }
  }
  return ticks * tick;
}

// pg_stat_statements (nested statements apart) and function timing, when the server has the module.
let statsOn = false;
{
  const admin = new pg.Client({ connectionString: cluster.url });
  await admin.connect();
  await admin.query(`ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'`);
  await admin.query(`ALTER SYSTEM SET track_functions = 'all'`);
  await admin.end();
  const bin = findPostgresBin() ?? '';
  const ctl = ['-D', join(cluster.dataDir, 'data'), '-w', 'restart'];
  const asUser = process.getuid?.() === 0;
  try {
    execFileSync(
      asUser ? 'runuser' : join(bin, 'pg_ctl'),
      asUser ? ['-u', 'postgres', '--', join(bin, 'pg_ctl'), ...ctl] : ctl,
      {
        stdio: 'ignore',
      },
    );
    statsOn = true;
  } catch {
    console.log('pg_stat_statements not loaded: server statement times not shown');
  }
}
const client = new pg.Client({ connectionString: cluster.url });
await client.connect();
if (statsOn) {
  await client.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
  await client.query(`ALTER SYSTEM SET pg_stat_statements.track = 'all'`);
  await client.query('SELECT pg_reload_conf()');
}
await client.query('CREATE TABLE bench_floor (id bigserial PRIMARY KEY, v text NOT NULL)');

// Statements sent, counted on the prototype (every client of the store goes through it).
let statements = 0;
const query = Reflect.get(pg.Client.prototype, 'query') as (this: pg.Client, ...args: unknown[]) => unknown;
pg.Client.prototype.query = function counted(this: pg.Client, ...args: unknown[]) {
  statements++;
  return query.apply(this, args);
} as typeof pg.Client.prototype.query;

async function claimedAppender(store: TaskStore): Promise<() => Promise<unknown>> {
  const task = await store.createTask({ kind: 'code', code: 'return 1', language: 'javascript', seed: 1 });
  const lease = await store.claimTask('bench', { leaseMs: 600_000, taskId: task.id });
  if (lease === null) throw new Error('no lease');
  let clock = 0;
  return () =>
    store.appendJournal(task.id, [{ type: 'clock', data: { clock: clock++ } }], {
      fencingToken: lease.fencingToken,
    });
}

interface Sample {
  readonly wallUs: number;
  readonly clientUs: number;
  readonly serverUs: number;
  readonly roundTrips: number;
}

/** `lanes` loops of `op` for MS; per op: wall, this process's CPU, the cluster's CPU, statements sent. */
async function measure(op: () => Promise<unknown>, lanes: number, server: boolean): Promise<Sample> {
  let done = 0;
  const s0 = statements;
  const srv0 = server ? clusterCpuMs() : 0;
  const cpu0 = process.cpuUsage();
  const start = performance.now();
  await Promise.all(
    Array.from({ length: lanes }, async () => {
      while (performance.now() - start < MS) {
        await op();
        done++;
      }
    }),
  );
  const wall = performance.now() - start;
  const cpu = process.cpuUsage(cpu0);
  return {
    wallUs: (wall * 1000) / done,
    clientUs: (cpu.user + cpu.system) / done,
    serverUs: server ? ((clusterCpuMs() - srv0) * 1000) / done : 0,
    roundTrips: (statements - s0) / done,
  };
}

const pgStore = await createPostgresTaskStore({ url: cluster.url, schema: 'bench' });
const sqliteStore = await createSqliteTaskStore({ path: join(dir, 'bench.db'), auditKey: null });
const cases: [string, () => Promise<unknown>, number, boolean][] = [
  ['postgres append, 1 in flight', await claimedAppender(pgStore), 1, true],
  [
    'floor: bare INSERT + commit',
    () => client.query({ name: 'floor', text: 'INSERT INTO bench_floor (v) VALUES ($1)', values: ['x'] }),
    1,
    true,
  ],
  ['sqlite append, 1 in flight', await claimedAppender(sqliteStore), 1, false],
  ['postgres append, 16 in flight', await claimedAppender(pgStore), 16, true],
  ['sqlite append, 16 in flight', await claimedAppender(sqliteStore), 16, false],
];
// Warm-up, discarded: the cluster's first WAL segments, the JIT, the statements' plans.
for (const [, op, lanes] of cases) await measure(op, lanes, false);
if (statsOn) {
  await client.query('SELECT pg_stat_statements_reset()');
  await client.query('SELECT pg_stat_reset()');
}
const samples = new Map<string, Sample[]>();
const loads: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  loads.push(os.loadavg()[0] ?? 0);
  for (const [name, op, lanes, server] of cases) {
    const list = samples.get(name) ?? [];
    list.push(await measure(op, lanes, server));
    samples.set(name, list);
  }
}
loads.push(os.loadavg()[0] ?? 0);

const at = (name: string, key: keyof Sample): number => median((samples.get(name) ?? []).map((s) => s[key]));
console.log(
  `machine: ${os.cpus().length} cores, load average ${Math.min(...loads).toFixed(1)}-${Math.max(...loads).toFixed(1)}; ` +
    `${ROUNDS} interleaved rounds of ${MS} ms, medians per operation (16 in flight: per append)`,
);
console.log(
  `${'operation'.padEnd(31)} ${'wall us'.padStart(8)} ${'ops/s'.padStart(7)} ${'client CPU us'.padStart(14)} ${'cluster CPU us'.padStart(15)} ${'round trips'.padStart(12)}`,
);
for (const [name, , , server] of cases) {
  const wall = at(name, 'wallUs');
  console.log(
    `${name.padEnd(31)} ${wall.toFixed(0).padStart(8)} ${(1e6 / wall).toFixed(0).padStart(7)} ${at(name, 'clientUs').toFixed(0).padStart(14)} ${(server ? at(name, 'serverUs').toFixed(0) : '-').padStart(15)} ${(server ? at(name, 'roundTrips').toFixed(2) : '-').padStart(12)}`,
  );
}
const ratio = (a: string, b: string): string => (at(b, 'wallUs') / at(a, 'wallUs')).toFixed(2);
console.log(
  `ratios (ops/s): append / floor ${ratio('postgres append, 1 in flight', 'floor: bare INSERT + commit')}x, ` +
    `append / sqlite ${ratio('postgres append, 1 in flight', 'sqlite append, 1 in flight')}x, ` +
    `floor / sqlite ${ratio('floor: bare INSERT + commit', 'sqlite append, 1 in flight')}x, ` +
    `16 in flight append / sqlite ${ratio('postgres append, 16 in flight', 'sqlite append, 16 in flight')}x`,
);
if (statsOn) {
  const rows = await client.query<{ calls: string; us: string; wal: string; rows: string; q: string }>(
    `SELECT calls::text, (total_exec_time / calls * 1000)::int::text AS us, (wal_bytes / calls)::int::text AS wal,
       (rows::float / calls)::numeric(8, 1)::text AS rows, left(regexp_replace(query, '\\s+', ' ', 'g'), 70) AS q
     FROM pg_stat_statements WHERE calls >= 100 ORDER BY total_exec_time DESC LIMIT 6`,
  );
  console.log('server execution per call (pg_stat_statements, nested statements apart):');
  for (const r of rows.rows)
    console.log(`  ${r.us.padStart(5)} us  WAL ${r.wal.padStart(5)} B  calls ${r.calls.padStart(7)}  ${r.q}`);
  const fns = await client.query<{ funcname: string; calls: string; us: string }>(
    `SELECT funcname, calls::text, (total_time / calls * 1000)::int::text AS us FROM pg_stat_user_functions
     WHERE calls >= 100 ORDER BY total_time DESC LIMIT 4`,
  );
  for (const f of fns.rows)
    console.log(`  ${f.us.padStart(5)} us  trigger function ${f.funcname} (${f.calls} calls)`);
}
await pgStore.close();
await sqliteStore.close();
await client.end();
await cluster.stop();
await rm(dir, { recursive: true, force: true });
