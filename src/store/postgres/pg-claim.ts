import { isCodecallError } from '../../errors/index.ts';
import type { CodecallError } from '../../errors/index.ts';
import type { Lease } from '../../spec/index.ts';
import { toTaskRecord } from '../rows.ts';
import type { TaskRow } from '../rows.ts';
import { auditStatus } from './pg-audit.ts';
import { one } from './pg-sql.ts';
import type { Sql } from './pg-sql.ts';

export type ClaimOptions = {
  leaseMs: number;
  taskId?: string;
  maxPerTenant?: number;
  tenantShare?: number;
  tenantReserve?: number;
  maxRunning?: number;
};

type ClaimRow = { id: string; status: string; fencing_token: number; tenant: string };

/**
 * TaskStore.claimTask inside a transaction (ADR 0042). Claims of one schema take turns on a transaction-scoped
 * advisory lock: the caps (`maxRunning`, `maxPerTenant`, the tenant share) count tasks over every node, and two
 * claimers counting at once could both pass them. The rows themselves are taken FOR UPDATE SKIP LOCKED, so a task
 * another transaction is writing (its runner pausing it) is passed over, not waited for.
 */
export async function claimReadable(
  sql: Sql,
  key: Buffer | undefined,
  owner: string,
  options: ClaimOptions,
  now: number,
): Promise<Lease | null> {
  await sql.query("SELECT pg_advisory_xact_lock(hashtext('codecall.claim.' || current_schema()))");
  for (;;) {
    const lease = await claimNext(sql, key, owner, options, now);
    if (lease === null) return null;
    const problem = await rowProblem(sql, lease.taskId);
    if (problem === null) return lease;
    // A row that cannot be decoded fails here, not in a runner that would give it up to be claimed again forever.
    await sql.query(
      `UPDATE tasks SET status = 'failed', error = $1, lease_owner = NULL, lease_expires_at = NULL,
         requested_action = NULL, version = version + 1, updated_at = $2 WHERE id = $3`,
      [JSON.stringify({ code: problem.code, message: problem.message }), now, lease.taskId],
    );
    await auditStatus(
      sql,
      key,
      lease.taskId,
      { from: 'running', to: 'failed', pauseReason: null, errorCode: problem.code, actor: lease.owner },
      now,
    );
    if (options.taskId !== undefined) return null;
  }
}

async function rowProblem(sql: Sql, taskId: string): Promise<CodecallError | null> {
  try {
    toTaskRecord((await one<TaskRow>(sql, 'SELECT * FROM tasks WHERE id = $1', [taskId])) as TaskRow);
    return null;
  } catch (e) {
    if (isCodecallError(e) && e.code === 'CHECKPOINT_CORRUPT') return e;
    throw e;
  }
}

async function claimNext(
  sql: Sql,
  key: Buffer | undefined,
  owner: string,
  options: ClaimOptions,
  now: number,
): Promise<Lease | null> {
  const row = (await expired(sql, options.taskId, now)) ?? (await queued(sql, options, now));
  if (row === undefined) return null;
  const expiresAt = now + options.leaseMs;
  const fencingToken = row.fencing_token + 1;
  await sql.query(
    `UPDATE tasks SET status = 'running', attempts = attempts + 1, fencing_token = $1, version = version + 1,
       lease_owner = $2, lease_expires_at = $3, run_after = NULL, updated_at = $4 WHERE id = $5`,
    [fencingToken, owner, expiresAt, now, row.id],
  );
  await sql.query(
    `INSERT INTO tenant_turns (tenant, served) VALUES ($1, (SELECT coalesce(max(served), 0) + 1 FROM tenant_turns))
     ON CONFLICT (tenant) DO UPDATE SET served = excluded.served`,
    [row.tenant],
  );
  await auditStatus(
    sql,
    key,
    row.id,
    { from: row.status, to: 'running', pauseReason: null, errorCode: null, actor: owner },
    now,
  );
  return { taskId: row.id, owner, fencingToken, expiresAt };
}

async function expired(sql: Sql, taskId: string | undefined, now: number): Promise<ClaimRow | undefined> {
  return one<ClaimRow>(
    sql,
    `SELECT id, status, fencing_token, tenant FROM tasks
       WHERE status = 'running' AND (lease_expires_at IS NULL OR lease_expires_at <= $1) ${taskId === undefined ? '' : 'AND id = $2'}
       ORDER BY created_at, id LIMIT 1 FOR UPDATE SKIP LOCKED`,
    taskId === undefined ? [now] : [now, taskId],
  );
}

/** The next pending task within the caps, fair across tenants (ADR 0023), as SqliteTaskStore picks it. */
async function queued(sql: Sql, options: ClaimOptions, now: number): Promise<ClaimRow | undefined> {
  let running = 0;
  if (options.maxRunning !== undefined) {
    running =
      (await one<{ n: number }>(sql, "SELECT count(*) AS n FROM tasks WHERE status = 'running'"))?.n ?? 0;
    if (running >= options.maxRunning) return undefined;
  }
  const share = options.tenantShare;
  const reserved =
    share !== undefined &&
    options.maxRunning !== undefined &&
    options.maxRunning - running <= (options.tenantReserve ?? 0);
  const cap = reserved ? Math.min(share, options.maxPerTenant ?? share) : options.maxPerTenant;
  const values: unknown[] = [now];
  const param = (v: unknown): string => {
    values.push(v);
    return `$${values.length}`;
  };
  const only = options.taskId === undefined ? '' : `AND id = ${param(options.taskId)}`;
  const ready = `status = 'pending' AND (run_after IS NULL OR run_after <= $1) ${only}`;
  const capWhere = cap === undefined ? '' : `WHERE running < ${param(cap)}`;
  const shareOrder = share === undefined ? '' : `running >= ${param(share)},`;
  return one<ClaimRow>(
    sql,
    `WITH ready AS (
       SELECT tenant, min(created_at) AS head,
         (SELECT count(*) FROM tasks AS r WHERE r.tenant = p.tenant AND r.status = 'running') AS running
       FROM tasks AS p WHERE ${ready} GROUP BY tenant
     ), turn AS (
       SELECT ready.tenant FROM ready LEFT JOIN tenant_turns AS s ON s.tenant = ready.tenant
       ${capWhere}
       ORDER BY ${shareOrder} running, coalesce(s.served, 0), head, ready.tenant
       LIMIT 1
     )
     SELECT id, status, fencing_token, tenant FROM tasks
       WHERE ${ready} AND tenant = (SELECT tenant FROM turn)
       ORDER BY status, tenant, priority DESC, created_at, id LIMIT 1 FOR UPDATE SKIP LOCKED`,
    values,
  );
}
