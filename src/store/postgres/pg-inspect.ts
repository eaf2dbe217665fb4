import pg from 'pg';
import { sqlStateOf } from './pg-errors.ts';
import { PG_SCHEMA_VERSION } from './pg-migrations.ts';
import { checkSchemaName } from './pg-pool.ts';
import { redactUrl } from './pg-url.ts';

/** The oldest PostgreSQL the store is built and tested for. */
export const MIN_POSTGRES_MAJOR = 15;

export interface PostgresInspection {
  /** `15.18` (server_version without the distribution's suffix). */
  readonly serverVersion: string;
  readonly serverMajor: number;
  /** The schema's version, or null when codecall has not created it yet (the first start does). */
  readonly schemaVersion: number | null;
  /** The version this codecall migrates to. */
  readonly supportedVersion: number;
}

/**
 * Connects once and reads the server's version and the codecall schema's, changing nothing (unlike opening the
 * store, which migrates): what `codecall doctor` reports. Throws the client's error; `postgresAdvice` words it.
 */
export async function inspectPostgres(options: {
  readonly url: string;
  readonly schema: string;
  readonly connectTimeoutMs?: number;
}): Promise<PostgresInspection> {
  checkSchemaName(options.schema);
  const client = new pg.Client({
    connectionString: options.url,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 5000,
    application_name: 'codecall doctor',
  });
  // A server that goes away mid-check must reject the query, not crash the process.
  client.on('error', () => undefined);
  await client.connect();
  try {
    const server = await client.query<{ v: string; n: string }>(
      "SELECT current_setting('server_version') AS v, current_setting('server_version_num') AS n",
    );
    const row = server.rows[0];
    const serverVersion = (row?.v ?? '?').split(' ')[0] ?? '?';
    const serverMajor = Math.floor(Number(row?.n ?? 0) / 10_000);
    const table = await client.query<{ t: string | null }>('SELECT to_regclass($1)::text AS t', [
      `${options.schema}.schema_version`,
    ]);
    let schemaVersion: number | null = null;
    if (table.rows[0]?.t != null) {
      const version = await client.query<{ version: number | null }>(
        `SELECT max(version) AS version FROM "${options.schema}".schema_version`,
      );
      schemaVersion = version.rows[0]?.version ?? 0;
    }
    return { serverVersion, serverMajor, schemaVersion, supportedVersion: PG_SCHEMA_VERSION };
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** What went wrong reaching PostgreSQL, and what to do about it, in one line (the URL without its password). */
export function postgresAdvice(url: string, error: unknown): string {
  const where = redactUrl(url);
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: unknown } | null)?.code;
  const state = sqlStateOf(error);
  let host = '';
  try {
    const u = new URL(url);
    host = `${u.hostname || 'localhost'}:${u.port || '5432'}`;
  } catch {
    return `${where} is not a valid URL: write it as postgres://USER:PASSWORD@HOST:PORT/DATABASE`;
  }
  if (code === 'ECONNREFUSED')
    return `cannot connect to ${where}: connection refused: is PostgreSQL running and listening on ${host}? (check the host and port of the db URL)`;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN')
    return `cannot connect to ${where}: host not found: check the host name of the db URL`;
  if (/timeout/i.test(message) || code === 'ETIMEDOUT')
    return `cannot connect to ${where}: no answer in time: check the host, the port and any firewall between`;
  if (state === '28P01' || state === '28000')
    return `cannot connect to ${where}: ${message}: check the user and password in the db URL and the server's pg_hba.conf`;
  if (state === '3D000')
    return `cannot connect to ${where}: ${message}: create the database (createdb) or name another in the db URL`;
  if (state === '53300')
    return `cannot connect to ${where}: ${message}: the server has no free connection: lower postgresPoolSize or raise max_connections`;
  return `cannot use ${where}: ${message}`;
}
