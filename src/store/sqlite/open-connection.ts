import Database from 'better-sqlite3';
import { auditKeyOf, keyConnection } from './audit-keying.ts';
import { keyApiKeys } from './api-key-macs.ts';
import { migrate } from './migrations.ts';

/**
 * Opens one connection on the file with the store's settings and brings its schema up to date; with an audit key
 * its audit appends are keyed (the first keyed open keys the database, ADR 0030).
 */
export function openConnection(path: string, busyTimeoutMs: number, auditKey?: Buffer): Database.Database {
  const db = new Database(path, { timeout: busyTimeoutMs });
  try {
    // WAL lets readers run beside the one writer; FULL fsyncs each commit (an entry is durable before its effect).
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.pragma('foreign_keys = ON');
    migrate(db);
    if (auditKey !== undefined) {
      keyConnection(db, auditKey, Date.now());
      // Keyed (not a read-only file never keyed): its API key rows are keyed too, once.
      if (auditKeyOf(db) !== undefined) keyApiKeys(db, auditKey);
    }
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}
