import type Database from 'better-sqlite3';
import { prepared } from './statement-cache.ts';

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
