import type Database from 'better-sqlite3';
import { CodecallError } from '../../errors/index.ts';
import type { Lease } from '../../spec/index.ts';
import { prepared } from './statement-cache.ts';

// The leases of SqliteTaskStore (the claim is sqlite-claim.ts): renew, prove, give up, end those of dead owners.

function fenced(lease: Lease, what: string): CodecallError {
  return new CodecallError('FENCED', `Lease on task ${lease.taskId} ${what}`, {
    details: { taskId: lease.taskId, fencingToken: lease.fencingToken },
  });
}

/** TaskStore.renewLease: the new expiry, or FENCED if the lease was lost. */
export function renewLeaseRow(db: Database.Database, lease: Lease, expiresAt: number): Lease {
  const result = prepared(
    db,
    `UPDATE tasks SET lease_expires_at = ? WHERE id = ? AND status = 'running' AND fencing_token = ?
         AND lease_owner = ?`,
  ).run(expiresAt, lease.taskId, lease.fencingToken, lease.owner);
  if (result.changes === 0) throw fenced(lease, 'was lost');
  return { ...lease, expiresAt };
}

/** TaskStore.assertLease: a read; FENCED unless the lease is held and unexpired at `now`. */
export function assertLeaseRow(db: Database.Database, lease: Lease, now: number): void {
  const row = prepared(
    db,
    `SELECT 1 FROM tasks WHERE id = ? AND status = 'running' AND fencing_token = ? AND lease_owner = ?
       AND lease_expires_at > ?`,
  ).get(lease.taskId, lease.fencingToken, lease.owner, now);
  if (row === undefined) throw fenced(lease, 'is no longer held');
}

/** TaskStore.releaseLease: a released running task is claimable at once (NULL expiry counts as expired). */
export function releaseLeaseRow(db: Database.Database, lease: Lease): void {
  prepared(
    db,
    `UPDATE tasks SET lease_owner = NULL, lease_expires_at = NULL
       WHERE id = ? AND fencing_token = ? AND lease_owner = ?`,
  ).run(lease.taskId, lease.fencingToken, lease.owner);
}

/**
 * TaskStore.expireLeases. The owners are read without the write lock (every runtime asks on every poll, and
 * nearly always nobody is gone); only when someone is, their leases end in one IMMEDIATE transaction. The owner
 * keeps its name on the row (the next claim's audit entry says who took over); only the expiry moves to now,
 * which is what a claim looks at.
 */
export function expireLeasesOf(
  db: Database.Database,
  isGone: (owner: string) => boolean,
  now: number,
): string[] {
  const owners = prepared(
    db,
    `SELECT DISTINCT lease_owner AS owner FROM tasks
       WHERE status = 'running' AND lease_owner IS NOT NULL AND lease_expires_at > ?`,
  ).all(now) as { owner: string }[];
  const gone = owners.map((o) => o.owner).filter((owner) => isGone(owner));
  if (gone.length === 0) return [];
  const expire = prepared(
    db,
    `UPDATE tasks SET lease_expires_at = ?
       WHERE status = 'running' AND lease_owner = ? AND lease_expires_at > ? RETURNING id`,
  );
  return db
    .transaction(() =>
      gone.flatMap((owner) => (expire.all(now, owner, now) as { id: string }[]).map((r) => r.id)),
    )
    .immediate();
}
