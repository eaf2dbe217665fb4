import type Database from 'better-sqlite3';
import { CodecallError } from '../../errors/index.ts';

/** Ordered schema steps; step i brings the database to version i + 1. Never edit a released step, append. */
export const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE tasks (
    id TEXT PRIMARY KEY,
    status TEXT NOT NULL CHECK (status IN ('pending', 'running', 'paused', 'succeeded', 'failed', 'cancelled')),
    pause_reason TEXT,
    input TEXT NOT NULL,
    result TEXT,
    error TEXT,
    attempts INTEGER NOT NULL DEFAULT 0,
    version INTEGER NOT NULL DEFAULT 1,
    lease_owner TEXT,
    lease_expires_at INTEGER,
    fencing_token INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  ) STRICT;
  CREATE INDEX tasks_by_created ON tasks (created_at, id);
  CREATE INDEX tasks_by_status_created ON tasks (status, created_at, id);
  CREATE TABLE journal (
    task_id TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    seq INTEGER NOT NULL CHECK (seq > 0),
    type TEXT NOT NULL,
    data TEXT NOT NULL,
    checksum TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (task_id, seq)
  ) STRICT, WITHOUT ROWID;
  `,
  // 2: what a run leaves behind for the task view, control requests from other processes, wake-ups.
  `
  ALTER TABLE tasks ADD COLUMN execution_log TEXT;
  ALTER TABLE tasks ADD COLUMN resources TEXT;
  ALTER TABLE tasks ADD COLUMN requested_action TEXT CHECK (requested_action IN ('pause', 'cancel'));
  ALTER TABLE tasks ADD COLUMN wake_at INTEGER;
  CREATE INDEX tasks_by_wake ON tasks (wake_at) WHERE wake_at IS NOT NULL;
  CREATE INDEX tasks_by_requested ON tasks (lease_owner) WHERE requested_action IS NOT NULL;
  `,
  // 3: Idempotency-Key of task creation: the key, the request it was first used for, and the task it made.
  `
  CREATE TABLE idempotency_keys (
    key TEXT PRIMARY KEY,
    request_hash TEXT NOT NULL,
    task_id TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    created_at INTEGER NOT NULL
  ) STRICT;
  `,
];

export const SCHEMA_VERSION = MIGRATIONS.length;

/** Brings the schema up to SCHEMA_VERSION in one transaction; returns the number of steps applied. */
export function migrate(db: Database.Database, migrations: readonly string[] = MIGRATIONS): number {
  const apply = db.transaction((): number => {
    db.exec('CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL) STRICT');
    const row = db.prepare('SELECT max(version) AS version FROM schema_version').get() as
      { version: number | null } | undefined;
    const current = row?.version ?? 0;
    if (current > migrations.length) {
      throw new CodecallError(
        'STORE_ERROR',
        `Database schema version ${current} is newer than this codecall supports (${migrations.length}); upgrade codecall`,
        { details: { schemaVersion: current, supportedVersion: migrations.length } },
      );
    }
    for (let version = current + 1; version <= migrations.length; version++) {
      db.exec(migrations[version - 1] ?? '');
    }
    if (current < migrations.length) {
      db.prepare('DELETE FROM schema_version').run();
      db.prepare('INSERT INTO schema_version (version) VALUES (?)').run(migrations.length);
    }
    return migrations.length - current;
  });
  // IMMEDIATE: two processes opening a fresh file at once must not both run the steps.
  return apply.immediate();
}
