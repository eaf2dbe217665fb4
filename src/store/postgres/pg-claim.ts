import { isCodecallError } from '../../errors/index.ts';
import type { CodecallError } from '../../errors/index.ts';
import type { Lease } from '../../spec/index.ts';
import { toTaskRecord } from '../rows.ts';
import type { TaskRow } from '../rows.ts';
import { canonicalJson, journalChecksumOfText } from '../journal-checksum.ts';
import { appendAudit, auditStatus } from './pg-audit.ts';
import { oneNamed } from './pg-sql.ts';
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
    const claimed = await claimNext(sql, key, owner, options, now);
    if (claimed === null) return null;
    const { lease, row } = claimed;
    const problem = rowProblem(row);
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

function rowProblem(row: TaskRow): CodecallError | null {
  try {
    toTaskRecord(row);
    return null;
  } catch (e) {
    if (isCodecallError(e) && e.code === 'CHECKPOINT_CORRUPT') return e;
    throw e;
  }
}

/** The picked task, with what its audit link needs: the journal's length and the audit log's last link. */
type Picked = ClaimRow & {
  journal_seq: number | null;
  audit_seq: number | null;
  audit_checksum: string | null;
};

async function claimNext(
  sql: Sql,
  key: Buffer | undefined,
  owner: string,
  options: ClaimOptions,
  now: number,
): Promise<{ lease: Lease; row: TaskRow } | null> {
  const row = await pick(sql, options, now);
  if (row === undefined) return null;
  const expiresAt = now + options.leaseMs;
  const fencingToken = row.fencing_token + 1;
  // pending -> running is `start`; running -> running is `recover`: both legal per TASK_TRANSITIONS.
  const audit = canonicalJson({
    from: row.status,
    to: 'running',
    pause_reason: null,
    error_code: null,
    actor: owner,
    journal_seq: row.journal_seq ?? 0,
  });
  const seq = (row.audit_seq ?? 0) + 1;
  const checksum = journalChecksumOfText(row.audit_checksum ?? '', seq, 'status', audit);
  // Unkeyed, the claim, the tenant's turn and the audit link are one statement; keyed, appendAudit adds the link.
  const inline = key === undefined;
  const claimed = await oneNamed<TaskRow>(
    sql,
    `WITH claimed AS (
       UPDATE tasks SET status = 'running', attempts = attempts + 1, fencing_token = $1, version = version + 1,
         lease_owner = $2, lease_expires_at = $3, run_after = NULL, updated_at = $4 WHERE id = $5 RETURNING *
     ), turn AS (
       INSERT INTO tenant_turns (tenant, served) VALUES ($6, (SELECT coalesce(max(served), 0) + 1 FROM tenant_turns))
       ON CONFLICT (tenant) DO UPDATE SET served = excluded.served
     )${
       inline
         ? `, link AS (
       INSERT INTO audit_log (task_id, seq, type, data, checksum, created_at) VALUES ($5, $7, 'status', $8, $9, $4)
     )`
         : ''
     }
     SELECT * FROM claimed`,
    [fencingToken, owner, expiresAt, now, row.id, row.tenant, ...(inline ? [seq, audit, checksum] : [])],
  );
  if (claimed === undefined) return null;
  if (key !== undefined) {
    await appendAudit(sql, key, row.id, 'status', JSON.parse(audit) as Record<string, unknown>, now);
  }
  return { lease: { taskId: row.id, owner, fencingToken, expiresAt }, row: claimed };
}

/**
 * One statement: a running task whose lease expired (its worker died; it keeps the slots it holds), else the next
 * pending one within the caps, fair across tenants (ADR 0023) as SqliteTaskStore picks it: none while
 * `maxRunning` run, none of a tenant at `maxPerTenant`, a tenant at its `tenantShare` only when no tenant below it
 * has any, and past the reserve the share is a hard cap. Both rows are taken FOR UPDATE SKIP LOCKED.
 */
async function pick(sql: Sql, options: ClaimOptions, now: number): Promise<Picked | undefined> {
  const values: unknown[] = [now];
  const param = (v: unknown, type: string): string => {
    values.push(v ?? null);
    return `$${values.length}::${type}`;
  };
  const only = options.taskId === undefined ? '' : `AND id = ${param(options.taskId, 'text')}`;
  const max = param(options.maxRunning, 'int');
  const share = param(options.tenantShare, 'int');
  const perTenant = param(options.maxPerTenant, 'int');
  const reserve = param(options.tenantReserve ?? 0, 'int');
  const ready = `status = 'pending' AND (run_after IS NULL OR run_after <= $1) ${only}`;
  return oneNamed<Picked>(
    sql,
    `WITH expired AS (
       SELECT id FROM tasks WHERE status = 'running' AND (lease_expires_at IS NULL OR lease_expires_at <= $1) ${only}
       ORDER BY created_at, id LIMIT 1 FOR UPDATE SKIP LOCKED
     ), busy AS (
       SELECT count(*) AS running FROM tasks WHERE status = 'running'
     ), ready AS (
       SELECT tenant, min(created_at) AS head,
         (SELECT count(*) FROM tasks AS r WHERE r.tenant = p.tenant AND r.status = 'running') AS running
       FROM tasks AS p WHERE ${ready} GROUP BY tenant
     ), turn AS (
       SELECT ready.tenant FROM ready CROSS JOIN busy LEFT JOIN tenant_turns AS s ON s.tenant = ready.tenant
       WHERE NOT EXISTS (SELECT 1 FROM expired) AND (${max} IS NULL OR busy.running < ${max})
         AND ready.running < coalesce(CASE WHEN ${share} IS NOT NULL AND ${max} IS NOT NULL
           AND ${max} - busy.running <= ${reserve} THEN least(${share}, coalesce(${perTenant}, ${share}))
           ELSE ${perTenant} END, 2147483647)
       ORDER BY (${share} IS NOT NULL AND ready.running >= ${share}), ready.running, coalesce(s.served, 0),
         ready.head, ready.tenant
       LIMIT 1
     ), queued AS (
       SELECT id FROM tasks WHERE ${ready} AND tenant = (SELECT tenant FROM turn)
       ORDER BY status, tenant, priority DESC, created_at, id LIMIT 1 FOR UPDATE SKIP LOCKED
     )
     SELECT t.id, t.status, t.fencing_token, t.tenant,
       (SELECT max(seq) FROM journal WHERE task_id = t.id) AS journal_seq,
       a.seq AS audit_seq, a.checksum AS audit_checksum
     FROM tasks AS t
     LEFT JOIN LATERAL (SELECT seq, checksum FROM audit_log WHERE task_id = t.id ORDER BY seq DESC LIMIT 1) AS a
       ON true
     WHERE t.id = coalesce((SELECT id FROM expired), (SELECT id FROM queued))`,
    values,
  );
}
