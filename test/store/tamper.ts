import { copyFile } from 'node:fs/promises';
import { join } from 'node:path';
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

let copies = 0;

/**
 * A copy of the database file at `pristine` (with its audit key beside it) in `dir`, edited by `edit` through a
 * connection of its own; the copy's path. Each call makes a new copy, so cases do not see each other's edits.
 */
export async function tamperedCopy(
  pristine: string,
  dir: string,
  edit: (db: Database.Database) => void,
): Promise<string> {
  const path = join(dir, `tampered-${++copies}.db`);
  await copyFile(pristine, path);
  await copyFile(`${pristine}.audit-key`, `${path}.audit-key`);
  const t = openForTampering(path);
  try {
    edit(t);
  } finally {
    t.close();
  }
  return path;
}
