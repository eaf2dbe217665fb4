import type Database from 'better-sqlite3';
import { prepared } from './statement-cache.ts';

/**
 * TaskStore.expireLeases; call inside an IMMEDIATE transaction. The owner keeps its name on the row (the next
 * claim's audit entry says who took over); only the expiry moves to now, which is what a claim looks at.
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
  const freed: string[] = [];
  for (const { owner } of owners) {
    if (!isGone(owner)) continue;
    const rows = prepared(
      db,
      `UPDATE tasks SET lease_expires_at = ?
         WHERE status = 'running' AND lease_owner = ? AND lease_expires_at > ? RETURNING id`,
    ).all(now, owner, now) as { id: string }[];
    freed.push(...rows.map((r) => r.id));
  }
  return freed;
}
