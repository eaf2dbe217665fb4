// The database of a chaos run, as the harness reads it behind the servers' backs: a SQLite file, or a PostgreSQL
// database made for the run on the test server.
import Database from 'better-sqlite3';
import pg from 'pg';

export type ChaosDb =
  { readonly kind: 'sqlite'; readonly path: string } | { readonly kind: 'postgres'; readonly url: string };

/** PostgreSQL has no key file beside it: every server of a run, and `audit verify`, are given this one. */
export const CHAOS_AUDIT_KEY = 'chaos-audit-key-0123456789abcdef';

/** The environment that keys the audit chain of `db` (none for SQLite: serve makes `<db>.audit-key`). */
export function auditKeyEnv(db: ChaosDb): Record<string, string> {
  return db.kind === 'postgres' ? { CODECALL_AUDIT_KEY: CHAOS_AUDIT_KEY } : {};
}

/** What `codecall serve --db` takes. */
export function dbArgument(db: ChaosDb): string {
  return db.kind === 'sqlite' ? db.path : db.url;
}

/** One read-only query (`?`-free SQL that both databases accept). */
export async function queryChaosDb<R>(db: ChaosDb, sql: string): Promise<R[]> {
  if (db.kind === 'sqlite') {
    const file = new Database(db.path, { readonly: true });
    try {
      return file.prepare(sql).all() as R[];
    } finally {
      file.close();
    }
  }
  const client = new pg.Client({ connectionString: db.url, options: '-c search_path=codecall' });
  await client.connect();
  try {
    const { rows } = await client.query(sql);
    return rows.map((r: Record<string, unknown>) =>
      Object.fromEntries(
        Object.entries(r).map(([k, v]) => [
          k,
          typeof v === 'string' && /^(created_at)$/.test(k) ? Number(v) : v,
        ]),
      ),
    ) as R[];
  } finally {
    await client.end();
  }
}

/**
 * Whether a write transaction can begin now (false: some process, e.g. a stopped one, holds SQLite's write lock).
 * PostgreSQL has no such lock: a stopped node's open transaction is ended by the server (idle-in-transaction
 * timeout), so it is always true there.
 */
export function writeLockFree(db: ChaosDb): boolean {
  if (db.kind === 'postgres') return true;
  const file = new Database(db.path, { timeout: 200 });
  try {
    file.exec('BEGIN IMMEDIATE');
    file.exec('ROLLBACK');
    return true;
  } catch {
    return false;
  } finally {
    file.close();
  }
}

/** A database of its own on the test server for one run; dropped by the returned function. */
export async function createChaosDatabase(
  serverUrl: string,
  name: string,
): Promise<{ url: string; drop: () => Promise<void> }> {
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: serverUrl });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}
