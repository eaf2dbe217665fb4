import { createHash } from 'node:crypto';
import Database from 'better-sqlite3';
import type pg from 'pg';
import { CodecallError } from '../../errors/index.ts';
import { canonicalJson } from '../journal-checksum.ts';
import { SCHEMA_VERSION } from '../sqlite/migrations.ts';
import { COPIED_TABLES } from './copy-tables.ts';
import type { CopiedTable } from './copy-tables.ts';
import { createPostgresTaskStore, redactUrl } from './create-postgres-task-store.ts';

export interface MigrateProgress {
  readonly table: string;
  readonly copied: number;
  readonly total: number;
}

export interface MigrateOptions {
  /** The SQLite database file (only read). */
  readonly from: string;
  readonly url: string;
  readonly schema?: string;
  /** Rows per INSERT (default 500). */
  readonly batchRows?: number;
  readonly onProgress?: (progress: MigrateProgress) => void;
  readonly signal?: AbortSignal;
}

export interface MigrateReport {
  readonly schema: string;
  /** Per table: rows copied and the SHA-256 over them, equal on both sides (else nothing is committed). */
  readonly tables: readonly { readonly name: string; readonly rows: number; readonly sha256: string }[];
}

type Row = Record<string, unknown>;

/**
 * Copies a SQLite task database into an empty PostgreSQL schema in one transaction (all or nothing): every table
 * of COPIED_TABLES, its rows as they are (checksums, MACs and ids kept). PostgreSQL's triggers check each journal
 * and audit link as it goes in, so a damaged chain stops the copy naming the task and seq. Then each table is read
 * back and its digest compared with the one taken while reading SQLite; only then is it committed.
 */
export async function migrateSqliteToPostgres(options: MigrateOptions): Promise<MigrateReport> {
  const source = openSource(options.from);
  const schema = options.schema ?? 'codecall';
  try {
    const store = await createPostgresTaskStore({
      url: options.url,
      schema,
      statementTimeoutMs: 0,
      idleInTransactionTimeoutMs: 0,
    });
    const client = await store.pool.connect();
    try {
      await client.query('BEGIN');
      await refuseNonEmpty(client, options.url, schema);
      const tables = [];
      for (const table of COPIED_TABLES) {
        if (options.signal?.aborted)
          throw new CodecallError('ABORTED', 'the migration was aborted; nothing was committed');
        const types = await columnTypes(client, table.name);
        const copied = await copyTable(source, client, table, types, options);
        const readBack = await digestTable(client, table, types);
        if (readBack.rows !== copied.rows || readBack.sha256 !== copied.sha256) {
          throw new CodecallError(
            'STORE_ERROR',
            `table ${table.name} reads back differently from what was copied`,
            {
              details: { table: table.name, copied, readBack },
            },
          );
        }
        tables.push({ name: table.name, ...copied });
      }
      await client.query('COMMIT');
      return { schema, tables };
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw explain(error);
    } finally {
      client.release();
      await store.close();
    }
  } finally {
    source.close();
  }
}

function openSource(path: string): Database.Database {
  let db: Database.Database;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true });
  } catch (e) {
    throw new CodecallError('NOT_FOUND', `cannot open the SQLite database ${path}: ${(e as Error).message}`, {
      cause: e,
    });
  }
  const version = (
    db.prepare('SELECT max(version) AS v FROM schema_version').get() as { v: number | null } | undefined
  )?.v;
  if (version !== SCHEMA_VERSION) {
    db.close();
    throw new CodecallError(
      'INVALID_ARGUMENT',
      `${path} is at schema version ${String(version)}, this codecall copies version ${SCHEMA_VERSION}: ` +
        (version !== null && version !== undefined && version < SCHEMA_VERSION
          ? 'open it once with this codecall (codecall serve --db) to upgrade it, then migrate'
          : 'use the codecall that wrote it'),
      { details: { schemaVersion: version ?? null, supportedVersion: SCHEMA_VERSION } },
    );
  }
  return db;
}

async function refuseNonEmpty(client: pg.PoolClient, url: string, schema: string): Promise<void> {
  for (const table of ['tasks', 'api_keys', 'webhook_outbox']) {
    const { rows } = await client.query<{ n: number }>(`SELECT count(*) AS n FROM ${table}`);
    if ((rows[0]?.n ?? 0) > 0) {
      throw new CodecallError(
        'INVALID_ARGUMENT',
        `schema ${schema} on ${redactUrl(url)} already holds ${table}: migrate copies into an empty schema only (use --schema to pick another)`,
        { details: { schema, table } },
      );
    }
  }
}

async function columnTypes(client: pg.PoolClient, table: string): Promise<Map<string, string>> {
  const { rows } = await client.query<{ column_name: string; udt_name: string }>(
    `SELECT column_name, udt_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1`,
    [table],
  );
  return new Map(rows.map((r) => [r.column_name, r.udt_name]));
}

function typeOf(types: Map<string, string>, table: string, column: string): string {
  const type = types.get(column);
  if (type === undefined)
    throw new CodecallError('STORE_ERROR', `${table}.${column} is missing in PostgreSQL`);
  return type;
}

/** One row as the digest sees it on both sides: its columns in order, bytes as hex. */
function rowText(row: Row, columns: readonly string[]): string {
  return canonicalJson(
    columns.map((c) => {
      const v = row[c];
      return Buffer.isBuffer(v) ? v.toString('hex') : (v ?? null);
    }),
  );
}

async function copyTable(
  source: Database.Database,
  client: pg.PoolClient,
  table: CopiedTable,
  types: Map<string, string>,
  options: MigrateOptions,
): Promise<{ rows: number; sha256: string }> {
  const { columns } = table;
  const from = table.from?.table ?? table.name;
  const total = (source.prepare(`SELECT count(*) AS n FROM ${from}`).get() as { n: number }).n;
  const arrays = columns.map((c, i) => `$${i + 1}::${typeOf(types, table.name, c)}[]`);
  const extra = Object.entries(table.extra ?? {});
  const rowsIn = `unnest(${arrays.join(', ')}) AS v(${columns.join(', ')})`;
  const key = table.updateKey;
  const insert =
    key === undefined
      ? `INSERT INTO ${table.name} (${[...columns, ...extra.map(([c]) => c)].join(', ')})
    SELECT ${[...columns.map((c) => `v.${c}`), ...extra.map(([, e]) => e)].join(', ')} FROM ${rowsIn}`
      : `UPDATE ${table.name} AS t SET ${columns
          .filter((c) => c !== key)
          .map((c) => `${c} = v.${c}`)
          .join(', ')} FROM ${rowsIn} WHERE t.${key} = v.${key}`;
  const selected = columns.map((c) => {
    const read = table.from?.columns[c] ?? c;
    return read === c ? c : `${read} AS ${c}`;
  });
  const hash = createHash('sha256');
  let batch: Row[] = [];
  let copied = 0;
  const flush = async (): Promise<void> => {
    if (batch.length === 0) return;
    await client.query(
      insert,
      columns.map((c) => batch.map((r) => r[c] ?? null)),
    );
    copied += batch.length;
    batch = [];
    options.onProgress?.({ table: table.name, copied, total });
  };
  const rows = source
    .prepare(`SELECT ${selected.join(', ')} FROM ${from} ORDER BY ${table.orderBy.join(', ')}`)
    .iterate() as IterableIterator<Row>;
  for (const row of rows) {
    hash.update(rowText(row, columns)).update('\n');
    batch.push(row);
    if (batch.length >= (options.batchRows ?? 500)) await flush();
  }
  await flush();
  if (total === 0) options.onProgress?.({ table: table.name, copied: 0, total });
  return { rows: copied, sha256: hash.digest('hex') };
}

async function digestTable(
  client: pg.PoolClient,
  table: CopiedTable,
  types: Map<string, string>,
): Promise<{ rows: number; sha256: string }> {
  const order = (table.pgOrderBy ?? table.orderBy).map((c) =>
    typeOf(types, table.name, c) === 'text' ? `${c} COLLATE "C"` : c,
  );
  await client.query(
    `DECLARE read_back NO SCROLL CURSOR FOR SELECT ${table.columns.join(', ')} FROM ${table.name} ORDER BY ${order.join(', ')}`,
  );
  const hash = createHash('sha256');
  let rows = 0;
  for (;;) {
    const page = await client.query<Row>('FETCH 1000 FROM read_back');
    for (const row of page.rows) hash.update(rowText(row, table.columns)).update('\n');
    rows += page.rows.length;
    if (page.rows.length < 1000) break;
  }
  await client.query('CLOSE read_back');
  return { rows, sha256: hash.digest('hex') };
}

/** A link the database refused (a damaged chain in the SQLite file) is said as such. */
function explain(error: unknown): unknown {
  const state = (error as { code?: unknown } | null)?.code;
  if (state === 'CC422' || state === 'CC409') {
    return new CodecallError(
      'CHECKPOINT_CORRUPT',
      `the SQLite database has a damaged log, nothing was copied: ${(error as Error).message} (run codecall audit verify --db on it)`,
      { cause: error },
    );
  }
  return error;
}
