// What each store operation costs PostgreSQL (for docs/scaling.md): round trips (every statement a client sends,
// BEGIN and COMMIT included), commits, and WAL bytes (pg_current_wal_lsn before and after, on a cluster nobody else
// writes to). Each operation is measured over `n` repetitions and divided.
// Usage: npm run build && node --import tsx bench/postgres-costs.ts
import pg from 'pg';
import { createPostgresTaskStore } from '../dist/internal.js';
import type { TaskStore } from '../dist/internal.js';
import { startPostgresCluster } from '../test/support/postgres-cluster.ts';

const cluster = await startPostgresCluster({ durable: true });
let statements = 0;
let commits = 0;
// Counted on the prototype: every pooled and listening client of the store goes through it.
const query = Reflect.get(pg.Client.prototype, 'query') as (this: pg.Client, ...args: unknown[]) => unknown;
pg.Client.prototype.query = function counted(this: pg.Client, ...args: unknown[]) {
  statements++;
  if (args[0] === 'COMMIT') commits++;
  return query.apply(this, args);
} as typeof pg.Client.prototype.query;

const admin = new pg.Client({ connectionString: cluster.url });
await admin.connect();
const lsn = async (): Promise<string> =>
  (await admin.query<{ l: string }>('SELECT pg_current_wal_lsn()::text AS l')).rows[0]?.l ?? '0/0';
const walBytes = async (from: string): Promise<number> =>
  Number(
    (await admin.query<{ d: string }>('SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1) AS d', [from]))
      .rows[0]?.d,
  );

// BENCH_AUDIT_KEY=1: the keyed audit chain (ADR 0030), as a server given a key writes it.
const keyed = process.env.BENCH_AUDIT_KEY === '1';
const store: TaskStore = await createPostgresTaskStore({
  url: cluster.url,
  schema: 'costs',
  ...(keyed ? { auditKey: Buffer.alloc(32, 7) } : {}),
});
console.log(keyed ? 'keyed audit chain' : 'unkeyed audit chain');
const code = 'const r = await tools.lookup({ id: 1 }); return r;';

async function cost(name: string, n: number, op: (i: number) => Promise<unknown>): Promise<void> {
  const s0 = statements;
  const c0 = commits;
  const w0 = await lsn();
  for (let i = 0; i < n; i++) await op(i);
  // Autocommitted single statements (the fast append, lease renewals) commit without a COMMIT of ours.
  const wal = await walBytes(w0);
  console.log(
    `${name.padEnd(34)} round trips ${((statements - s0) / n).toFixed(1).padStart(5)}  ` +
      `explicit commits ${((commits - c0) / n).toFixed(1).padStart(4)}  WAL ${(wal / n).toFixed(0).padStart(6)} B`,
  );
}

const N = 200;
const ids: string[] = [];
const leases: { taskId: string; fencingToken: number }[] = [];
await cost('createTask', N, async () => {
  ids.push((await store.createTask({ kind: 'code', code, language: 'javascript', seed: 1 })).id);
});
await cost('claimTask (with caps)', N, async () => {
  const lease = await store.claimTask('node', { leaseMs: 60_000, maxRunning: 10_000, tenantShare: 5000 });
  if (lease) leases.push(lease);
});
await cost('appendJournal, first (slow path)', N, async (i) => {
  const l = leases[i];
  if (l)
    await store.appendJournal(l.taskId, [{ type: 'clock', data: { clock: 1 } }], {
      fencingToken: l.fencingToken,
    });
});
await cost('appendJournal, next (fast path)', N, async (i) => {
  const l = leases[i];
  if (l)
    await store.appendJournal(l.taskId, [{ type: 'clock', data: { clock: 2 } }], {
      fencingToken: l.fencingToken,
    });
});
await cost('renewLease', N, async (i) => {
  const l = leases[i];
  if (l) await store.renewLease({ ...l, owner: 'node', expiresAt: 0 }, { leaseMs: 60_000 });
});
await cost('updateTask (end: succeeded)', N, async (i) => {
  const l = leases[i];
  if (l)
    await store.updateTask(l.taskId, { status: 'succeeded', result: '1' }, { fencingToken: l.fencingToken });
});
await store.close();
await admin.end();
await cluster.stop();
