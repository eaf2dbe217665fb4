import type Database from 'better-sqlite3';
import type { Lease } from '../../spec/index.ts';
import { auditStatus } from './sqlite-audit.ts';
import { prepared } from './statement-cache.ts';

/**
 * Picks and leases the next runnable task (see TaskStore.claimTask). Call inside an IMMEDIATE transaction:
 * recovery first (a task whose worker died keeps its slot, its tenant's and the global one), then the queue fair
 * across tenants (ADR 0023): the tenant with the fewest running tasks, then the one served least recently, then
 * the one waiting longest; within that tenant priority then FIFO. Nothing is claimed while `maxRunning` tasks run
 * (over every runner); a tenant at `maxPerTenant` is skipped. `tenantShare` is soft (work-conserving): a tenant at
 * its share is served after every tenant below it, so it takes a free slot only when none of them has claimable
 * work, and a slot never idles while a task could run in it.
 */
export function claimNext(
  db: Database.Database,
  owner: string,
  options: ClaimOptions & { leaseMs: number },
  now: number,
): Lease | null {
  const row = expired(db, options.taskId, now) ?? queued(db, options, now);
  if (row === undefined) return null;
  const expiresAt = now + options.leaseMs;
  const fencingToken = row.fencing_token + 1;
  // pending -> running is `start`; running -> running is `recover`: both legal per TASK_TRANSITIONS.
  prepared(
    db,
    `UPDATE tasks SET status = 'running', attempts = attempts + 1, fencing_token = ?, version = version + 1,
       lease_owner = ?, lease_expires_at = ?, run_after = NULL, updated_at = ? WHERE id = ?`,
  ).run(fencingToken, owner, expiresAt, now, row.id);
  servedTenant(db, row.tenant);
  auditStatus(
    db,
    row.id,
    { from: row.status, to: 'running', pauseReason: null, errorCode: null, actor: owner },
    now,
  );
  return { taskId: row.id, owner, fencingToken, expiresAt };
}

type ClaimRow = { id: string; status: string; fencing_token: number; tenant: string };

type ClaimOptions = {
  taskId?: string;
  maxPerTenant?: number;
  tenantShare?: number;
  tenantReserve?: number;
  maxRunning?: number;
};

/** A running task whose lease expired (its worker died): it keeps the slots it holds. */
function expired(db: Database.Database, taskId: string | undefined, now: number): ClaimRow | undefined {
  return prepared(
    db,
    `SELECT id, status, fencing_token, tenant FROM tasks
       WHERE status = 'running' AND (lease_expires_at IS NULL OR lease_expires_at <= ?) ${taskId === undefined ? '' : 'AND id = ?'}
       ORDER BY created_at, id LIMIT 1`,
  ).get(...(taskId === undefined ? [now] : [now, taskId])) as ClaimRow | undefined;
}

/**
 * The next pending task within the caps: none while `maxRunning` run, none of a tenant at `maxPerTenant`; a tenant
 * at its `tenantShare` only when no tenant below its share has any (ADR 0023, work-conserving share).
 */
function queued(db: Database.Database, options: ClaimOptions, now: number): ClaimRow | undefined {
  const running = runningCount(db, options.maxRunning);
  if (options.maxRunning !== undefined && running >= options.maxRunning) return undefined;
  const share = options.tenantShare;
  // The last `tenantReserve` free slots go only to tenants below their share: a hard cap at the share for now.
  const reserved =
    share !== undefined &&
    options.maxRunning !== undefined &&
    options.maxRunning - running <= (options.tenantReserve ?? 0);
  const cap = reserved ? Math.min(share, options.maxPerTenant ?? share) : options.maxPerTenant;
  const only = options.taskId === undefined ? '' : 'AND id = ?';
  const ready = `status = 'pending' AND (run_after IS NULL OR run_after <= ?) ${only}`;
  // One statement: the tenant whose turn it is, then its best task. A tenant's priority orders its own tasks only.
  return prepared(
    db,
    `WITH ready AS (
       SELECT tenant, min(created_at) AS head,
         (SELECT count(*) FROM tasks AS r WHERE r.tenant = p.tenant AND r.status = 'running') AS running
       FROM tasks AS p WHERE ${ready} GROUP BY tenant
     ), turn AS (
       SELECT ready.tenant FROM ready LEFT JOIN tenant_turns AS s ON s.tenant = ready.tenant
       ${cap === undefined ? '' : 'WHERE running < ?'}
       ORDER BY ${share === undefined ? '' : 'running >= ?,'} running, coalesce(s.served, 0), head, ready.tenant
       LIMIT 1
     )
     SELECT id, status, fencing_token, tenant FROM tasks
       WHERE ${ready} AND tenant = (SELECT tenant FROM turn)
       ORDER BY status, tenant, priority DESC, created_at, id LIMIT 1`,
  ).get(
    now,
    ...(options.taskId === undefined ? [] : [options.taskId]),
    ...(cap === undefined ? [] : [cap]),
    ...(share === undefined ? [] : [share]),
    now,
    ...(options.taskId === undefined ? [] : [options.taskId]),
  ) as ClaimRow | undefined;
}

/** Marks the tenant as served last (a counter, not the clock: two claims in one millisecond still take turns). */
function servedTenant(db: Database.Database, tenant: string): void {
  prepared(
    db,
    `INSERT INTO tenant_turns (tenant, served) VALUES (?, (SELECT coalesce(max(served), 0) + 1 FROM tenant_turns))
       ON CONFLICT (tenant) DO UPDATE SET served = excluded.served`,
  ).run(tenant);
}

/** Tasks running over every runner (an expired lease counts: it is recovered, not freed); 0 without a bound. */
function runningCount(db: Database.Database, maxRunning: number | undefined): number {
  if (maxRunning === undefined) return 0;
  const { n } = prepared(db, "SELECT count(*) AS n FROM tasks WHERE status = 'running'").get() as {
    n: number;
  };
  return n;
}
