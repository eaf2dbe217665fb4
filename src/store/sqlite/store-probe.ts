import type Database from 'better-sqlite3';
import { prepared } from './statement-cache.ts';

/** A health probe waits this long at most for another connection's write lock (a probe must not stall). */
const PROBE_BUSY_MS = 1000;

/**
 * The health probe: one row updated and committed. A rolled-back write never reaches the disk, so only a commit
 * shows a full disk (a WAL that must grow) or a read-only file; it costs one small commit.
 */
export function probeCommit(db: Database.Database, busyTimeoutMs: number): void {
  db.pragma(`busy_timeout = ${Math.min(busyTimeoutMs, PROBE_BUSY_MS)}`);
  try {
    db.transaction(() =>
      prepared(db, 'UPDATE store_probe SET probed_at = ? WHERE id = 1').run(Date.now()),
    ).immediate();
  } finally {
    db.pragma(`busy_timeout = ${busyTimeoutMs}`);
  }
}
