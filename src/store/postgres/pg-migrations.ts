import type pg from 'pg';
import { CodecallError } from '../../errors/index.ts';
import { SCHEMA_V1 } from './pg-schema.ts';
import { SCHEMA_BODIES } from './pg-schema-bodies.ts';
import { SCHEMA_TOOL_USAGE } from './pg-schema-tool-usage.ts';
import { SCHEMA_APPEND } from './pg-schema-append.ts';
import { SCHEMA_TOTALS } from './pg-schema-totals.ts';
import { PG_ENDED_STEP as SCHEMA_ENDED } from '../stats-rows.ts';

/** Ordered schema steps; step i brings the schema to version i + 1. Never edit a released step, append. */
export const PG_MIGRATIONS: readonly string[] = [
  SCHEMA_V1,
  // 2: large response bodies out of line, in chunked rows (ADR 0046).
  SCHEMA_BODIES,
  // 3: per-tenant rate limits and quotas on tool calls (ADR 0045).
  SCHEMA_TOOL_USAGE,
  // 4: the journal's chain check inlined and unsorted, same promises (ADR 0050).
  SCHEMA_APPEND,
  // 5: the journal's totals beside the change stamp in task_changes, off the wide tasks row (ADR 0050).
  SCHEMA_TOTALS,
  // 6: ended tasks by end time for the operator's view (ADR 0054), as SQLite's step 21.
  SCHEMA_ENDED,
];

export const PG_SCHEMA_VERSION = PG_MIGRATIONS.length;

/**
 * Brings the schema up to PG_SCHEMA_VERSION in one transaction, under an advisory lock so that nodes starting
 * together run each step once; a schema newer than this codecall is refused. Returns the number of steps applied.
 */
export async function migratePostgres(
  client: pg.ClientBase,
  schema: string,
  migrations: readonly string[] = PG_MIGRATIONS,
): Promise<number> {
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`codecall.migrate.${schema}`]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(schema)}`);
    await client.query(`SET LOCAL search_path TO ${quoteIdent(schema)}`);
    await client.query('CREATE TABLE IF NOT EXISTS schema_version (version integer NOT NULL)');
    const row = await client.query<{ version: number | null }>(
      'SELECT max(version) AS version FROM schema_version',
    );
    const current = row.rows[0]?.version ?? 0;
    if (current > migrations.length) {
      throw new CodecallError(
        'STORE_ERROR',
        `Database schema version ${current} is newer than this codecall supports (${migrations.length}); upgrade codecall`,
        { details: { schemaVersion: current, supportedVersion: migrations.length } },
      );
    }
    for (let version = current + 1; version <= migrations.length; version++) {
      await client.query(migrations[version - 1] ?? '');
    }
    if (current < migrations.length) {
      await client.query('DELETE FROM schema_version');
      await client.query('INSERT INTO schema_version (version) VALUES ($1)', [migrations.length]);
    }
    await client.query('COMMIT');
    return migrations.length - current;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

/** A schema name as an SQL identifier (only names of letters, digits and `_` are accepted where one is set). */
export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
