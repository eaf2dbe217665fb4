import type Database from 'better-sqlite3';
import type { Lease } from '../../spec/index.ts';
import { auditStatus } from './sqlite-audit.ts';
import { prepared } from './statement-cache.ts';

/**
 * Picks and leases the next runnable task (see TaskStore.claimTask). Call inside an IMMEDIATE transaction:
 * recovery first (a task whose worker died keeps its slot, its tenant's and the global one), then the queue in
 * priority order, unless `maxRunning` tasks already run (over every runner) or the tenant has `maxPerTenant`.
 */
export function claimNext(
  db: Database.Database,
  owner: string,
  options: { leaseMs: number; taskId?: string; maxPerTenant?: number; maxRunning?: number },
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
  auditStatus(
    db,
    row.id,
    { from: row.status, to: 'running', pauseReason: null, errorCode: null, actor: owner },
    now,
  );
  return { taskId: row.id, owner, fencingToken, expiresAt };
}

type ClaimRow = { id: string; status: string; fencing_token: number };

/** A running task whose lease expired (its worker died): it keeps the slots it holds. */
function expired(db: Database.Database, taskId: string | undefined, now: number): ClaimRow | undefined {
  return prepared(
    db,
    `SELECT id, status, fencing_token FROM tasks
       WHERE status = 'running' AND (lease_expires_at IS NULL OR lease_expires_at <= ?) ${taskId === undefined ? '' : 'AND id = ?'}
       ORDER BY created_at, id LIMIT 1`,
  ).get(...(taskId === undefined ? [now] : [now, taskId])) as ClaimRow | undefined;
}

/** The next pending task within the caps: none while `maxRunning` run, none of a tenant at `maxPerTenant`. */
function queued(
  db: Database.Database,
  options: { taskId?: string; maxPerTenant?: number; maxRunning?: number },
  now: number,
): ClaimRow | undefined {
  if (globalSlotTaken(db, options.maxRunning)) return undefined;
  const cap = options.maxPerTenant;
  return prepared(
    db,
    `SELECT id, status, fencing_token FROM tasks AS t
       WHERE status = 'pending' AND (run_after IS NULL OR run_after <= ?) ${options.taskId === undefined ? '' : 'AND id = ?'}
         ${cap === undefined ? '' : "AND (SELECT count(*) FROM tasks r WHERE r.tenant = t.tenant AND r.status = 'running') < ?"}
       ORDER BY status, priority DESC, created_at, id LIMIT 1`,
  ).get(
    now,
    ...(options.taskId === undefined ? [] : [options.taskId]),
    ...(cap === undefined ? [] : [cap]),
  ) as ClaimRow | undefined;
}

/** Whether `maxRunning` tasks already run over every runner (an expired lease counts: it is recovered, not freed). */
function globalSlotTaken(db: Database.Database, maxRunning: number | undefined): boolean {
  if (maxRunning === undefined) return false;
  const { n } = prepared(db, "SELECT count(*) AS n FROM tasks WHERE status = 'running'").get() as {
    n: number;
  };
  return n >= maxRunning;
}
