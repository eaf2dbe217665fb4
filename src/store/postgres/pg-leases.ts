import { CodecallError } from '../../errors/index.ts';
import type { Lease } from '../../spec/index.ts';
import { all, one } from './pg-sql.ts';
import type { Sql } from './pg-sql.ts';

function fenced(lease: Lease, what: string): CodecallError {
  return new CodecallError('FENCED', `Lease on task ${lease.taskId} ${what}`, {
    details: { taskId: lease.taskId, fencingToken: lease.fencingToken },
  });
}

/** TaskStore.renewLease: one guarded UPDATE (the row lock re-checks the guard on the latest row). */
export async function renewLeaseRow(sql: Sql, lease: Lease, expiresAt: number): Promise<Lease> {
  const result = await sql.query(
    `UPDATE tasks SET lease_expires_at = $1 WHERE id = $2 AND status = 'running' AND fencing_token = $3
       AND lease_owner = $4`,
    [expiresAt, lease.taskId, lease.fencingToken, lease.owner],
  );
  if (result.rowCount === 0) throw fenced(lease, 'was lost');
  return { ...lease, expiresAt };
}

/** TaskStore.assertLease: a read. */
export async function assertLeaseRow(sql: Sql, lease: Lease, now: number): Promise<void> {
  const row = await one(
    sql,
    `SELECT 1 FROM tasks WHERE id = $1 AND status = 'running' AND fencing_token = $2 AND lease_owner = $3
       AND lease_expires_at > $4`,
    [lease.taskId, lease.fencingToken, lease.owner, now],
  );
  if (row === undefined) throw fenced(lease, 'is no longer held');
}

/** TaskStore.releaseLease: a released running task is claimable at once. */
export async function releaseLeaseRow(sql: Sql, lease: Lease): Promise<void> {
  await sql.query(
    `UPDATE tasks SET lease_owner = NULL, lease_expires_at = NULL WHERE id = $1 AND fencing_token = $2 AND lease_owner = $3`,
    [lease.taskId, lease.fencingToken, lease.owner],
  );
}

/** TaskStore.expireLeases: the owners are read first; only those `isGone` names have their leases ended. */
export async function expireLeasesOf(
  sql: Sql,
  isGone: (owner: string) => boolean,
  now: number,
): Promise<string[]> {
  const owners = await all<{ owner: string }>(
    sql,
    `SELECT DISTINCT lease_owner AS owner FROM tasks
       WHERE status = 'running' AND lease_owner IS NOT NULL AND lease_expires_at > $1`,
    [now],
  );
  const gone = owners.map((o) => o.owner).filter((owner) => isGone(owner));
  if (gone.length === 0) return [];
  const rows = await all<{ id: string }>(
    sql,
    `UPDATE tasks SET lease_expires_at = $1 WHERE status = 'running' AND lease_owner = ANY($2::text[])
       AND lease_expires_at > $1 RETURNING id`,
    [now, gone],
  );
  return rows.map((r) => r.id);
}
