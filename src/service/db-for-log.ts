import { isPostgresUrl, redactUrl } from '../store/postgres/pg-url.ts';

/** The `db` setting as logs show it: an SQLite path as is, a PostgreSQL URL without its password. */
export function dbForLog(db: string): string {
  return isPostgresUrl(db) ? redactUrl(db) : db;
}
