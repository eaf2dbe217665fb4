import { createHash } from 'node:crypto';
import type pg from 'pg';
import { RETRY_STATES, sqlStateOf } from './pg-errors.ts';

/** What store functions run statements on: a pooled client inside a transaction, or the pool for one statement. */
export interface Sql {
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(
    text: string,
    values?: unknown[],
  ): Promise<pg.QueryResult<R>>;
  /** A named statement: parsed and planned once per connection (the hot path's statements). */
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(config: pg.QueryConfig): Promise<pg.QueryResult<R>>;
}

const names = new Map<string, string>();

/**
 * A hot path's statement as a named one: PostgreSQL parses and plans it once per connection instead of at every
 * call (for the statements of appends, claims and updates, most of their server time).
 */
export function named(text: string, values: unknown[]): pg.QueryConfig {
  let name = names.get(text);
  if (name === undefined) {
    name = `codecall_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`;
    names.set(text, name);
  }
  return { name, text, values };
}

/** The first row of a named (hot path) statement, or undefined. */
export async function oneNamed<R extends pg.QueryResultRow>(
  sql: Sql,
  text: string,
  values: unknown[],
): Promise<R | undefined> {
  return (await sql.query<R>(named(text, values))).rows[0];
}

/** The first row of a statement, or undefined. */
export async function one<R extends pg.QueryResultRow>(
  sql: Sql,
  text: string,
  values: unknown[] = [],
): Promise<R | undefined> {
  return (await sql.query<R>(text, values)).rows[0];
}

export async function all<R extends pg.QueryResultRow>(
  sql: Sql,
  text: string,
  values: unknown[] = [],
): Promise<R[]> {
  return (await sql.query<R>(text, values)).rows;
}

const MAX_ATTEMPTS = 8;

/**
 * Runs `fn` in a READ COMMITTED transaction on one pooled client; a transaction the server aborted for a
 * serialization failure or a deadlock runs again (a few times, with a short jittered wait).
 */
export async function transaction<T>(pool: pg.Pool, fn: (sql: Sql) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const client = await pool.connect();
    let broken = false;
    try {
      await client.query('BEGIN');
      const value = await fn(client);
      await client.query('COMMIT');
      return value;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {
        broken = true;
      });
      const state = sqlStateOf(error);
      // A session opened while the database was read-only (default_transaction_read_only) stays so: replace it,
      // so that the pool writes again once the database does (pool.query does the same on any error).
      if (state === '25006') broken = true;
      if (state === null || !RETRY_STATES.has(state) || attempt >= MAX_ATTEMPTS) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 5 * attempt));
    } finally {
      client.release(broken);
    }
  }
}
