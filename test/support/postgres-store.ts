import { inject } from 'vitest';
import pg from 'pg';
import { createPostgresTaskStore } from '../../src/store/postgres/create-postgres-task-store.ts';
import type { PostgresTaskStore } from '../../src/store/postgres/pg-task-store.ts';

/** The PostgreSQL server of this run (test/global-postgres.ts), or null with why (print it when skipping). */
export function postgresUrl(): string | null {
  return inject('postgresUrl');
}

export function postgresSkipReason(): string {
  return `PostgreSQL tests skipped: ${inject('postgresSkip')}`;
}

let schemas = 0;

/** A schema no other store of this run uses (each test file runs in a process of its own). */
export function freshSchema(prefix = 't'): string {
  return `${prefix}_${process.pid}_${++schemas}`;
}

/** A store on a fresh schema of the test server. */
export async function createTestPostgresStore(
  options: { schema?: string; poolSize?: number; statementTimeoutMs?: number } = {},
): Promise<PostgresTaskStore> {
  const url = postgresUrl();
  if (url === null) throw new Error(postgresSkipReason());
  return createPostgresTaskStore({
    url,
    schema: options.schema ?? freshSchema(),
    poolSize: options.poolSize ?? 4,
    ...options,
  });
}

/**
 * Runs statements as a superuser with triggers off (session_replication_role = replica), as an attacker with the
 * database's password or a bad disk could: the append-only triggers stop accidents, the checksum chains the rest.
 */
export async function tamperPostgres(
  schema: string,
  statements: (client: pg.Client) => Promise<void>,
): Promise<void> {
  const url = postgresUrl();
  if (url === null) throw new Error(postgresSkipReason());
  const client = new pg.Client({ connectionString: url, options: `-c search_path=${schema}` });
  await client.connect();
  try {
    await client.query('SET session_replication_role = replica');
    await statements(client);
  } finally {
    await client.end();
  }
}
