import pg from 'pg';
import { CodecallError } from '../../errors/index.ts';

export interface PostgresPoolOptions {
  readonly url: string;
  /** The schema that holds codecall's tables (created on first open). Default `codecall`. */
  readonly schema?: string;
  /** Connections per node. Default 10. */
  readonly poolSize?: number;
  /** A statement running longer is cancelled (STORE_ERROR). Default 30000; 0 for none. */
  readonly statementTimeoutMs?: number;
  /**
   * A transaction left open this long by its node (a process stopped mid-transaction: SIGSTOP, a frozen VM) is
   * ended by the server, which frees its locks (claims and status numbering wait on them cluster-wide).
   * Default 5000.
   */
  readonly idleInTransactionTimeoutMs?: number;
  /** How long opening a connection may take. Default 10000. */
  readonly connectTimeoutMs?: number;
}

const INT8 = 20;
const NUMERIC = 1700;

/** bigint columns are epoch ms, counters and tokens, all far inside a double's exact range: read as numbers. */
const types = {
  getTypeParser(oid: number, format?: string): (value: string) => unknown {
    if (oid === INT8 || oid === NUMERIC) return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format as 'text') as (value: string) => unknown;
  },
};

// At most 54 characters: the notification channel `codecall_<schema>` must fit PostgreSQL's 63.
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,53}$/;

export function checkSchemaName(schema: string): void {
  if (!SCHEMA_NAME.test(schema)) {
    throw new CodecallError(
      'INVALID_ARGUMENT',
      `schema must be a plain SQL name (lower-case letters, digits, _), not ${JSON.stringify(schema)}`,
      {
        details: { field: 'schema' },
      },
    );
  }
}

/** A pool whose connections use the store's schema and statement timeout. */
export function createPool(options: PostgresPoolOptions): pg.Pool {
  const schema = options.schema ?? 'codecall';
  checkSchemaName(schema);
  const timeout = options.statementTimeoutMs ?? 30_000;
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.poolSize ?? 10,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000,
    idleTimeoutMillis: 30_000,
    options: `-c search_path=${schema} -c statement_timeout=${timeout} -c idle_in_transaction_session_timeout=${options.idleInTransactionTimeoutMs ?? 5000} -c application_name=codecall`,
    types,
  });
  // An idle client whose server went away must not crash the process; the next query gets a fresh one.
  pool.on('error', () => undefined);
  return pool;
}
