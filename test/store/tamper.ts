import Database from 'better-sqlite3';

/**
 * A second connection to a store's file that may rewrite its journal and audit log, as an attacker or a bad disk
 * could: it drops the append-only triggers first (they stop accidents, the checksum chains catch the rest).
 */
export function openForTampering(path: string): Database.Database {
  const db = new Database(path);
  db.exec(`DROP TRIGGER IF EXISTS journal_no_update; DROP TRIGGER IF EXISTS journal_no_delete;
           DROP TRIGGER IF EXISTS audit_no_update; DROP TRIGGER IF EXISTS audit_no_delete;`);
  return db;
}
