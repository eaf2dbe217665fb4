import type Database from 'better-sqlite3';
import type { Lease } from '../../spec/index.ts';
import { auditStatus } from './sqlite-audit.ts';
import { prepared } from './statement-cache.ts';

/**
 * Picks and leases the next runnable task (see TaskStore.claimTask). Call inside an IMMEDIATE transaction:
 * recovery first (a task whose worker died keeps its tenant's slot), then the queue in priority order.
 */
export function claimNext(
  db: Database.Database,
  owner: string,
  options: { leaseMs: number; taskId?: string; maxPerTenant?: number },
  now: number,
): Lease | null {
  const only = options.taskId === undefined ? '' : 'AND id = ?';
  const cap = options.maxPerTenant;
  const row = (prepared(
    db,
    `SELECT id, status, fencing_token FROM tasks
       WHERE status = 'running' AND (lease_expires_at IS NULL OR lease_expires_at <= ?) ${only}
       ORDER BY created_at, id LIMIT 1`,
  ).get(...(options.taskId === undefined ? [now] : [now, options.taskId])) ??
    prepared(
      db,
      `SELECT id, status, fencing_token FROM tasks AS t
       WHERE status = 'pending' AND (run_after IS NULL OR run_after <= ?) ${only}
         ${cap === undefined ? '' : "AND (SELECT count(*) FROM tasks r WHERE r.tenant = t.tenant AND r.status = 'running') < ?"}
       ORDER BY status, priority DESC, created_at, id LIMIT 1`,
    ).get(
      now,
      ...(options.taskId === undefined ? [] : [options.taskId]),
      ...(cap === undefined ? [] : [cap]),
    )) as { id: string; status: string; fencing_token: number } | undefined;
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
