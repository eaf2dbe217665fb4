import pg from 'pg';
import { CodecallError } from '../../errors/index.ts';
import type { StoreHealthEvent } from '../../spec/index.ts';
import { keyApiKeys } from './pg-api-key-macs.ts';
import { keySchema } from './pg-audit-keying.ts';
import { toPgStoreError } from './pg-errors.ts';
import { pgFaultMessage, pgFaultOf } from './pg-faults.ts';
import { migratePostgres } from './pg-migrations.ts';
import { createPool } from './pg-pool.ts';
import type { PostgresPoolOptions } from './pg-pool.ts';
import { PostgresTaskStore } from './pg-task-store.ts';
import { redactUrl } from './pg-url.ts';

export { isPostgresUrl, redactUrl } from './pg-url.ts';

export interface PostgresTaskStoreOptions extends PostgresPoolOptions {
  readonly signal?: AbortSignal;
  /** How long a health probe's answer is reused, and the retry interval while faulted (ms). Default 1000. */
  readonly healthCacheMs?: number;
  /** Store faults as they come and go (see StoreHealthEvent): the service logs and counts them. */
  readonly onHealth?: (event: StoreHealthEvent) => void;
  /**
   * The audit key (ADR 0030), kept outside the database (there is no file beside a PostgreSQL database to find it
   * in: the caller passes it). Null or absent: append unkeyed and never key the schema.
   */
  readonly auditKey?: Buffer | null;
}

/**
 * Connects to PostgreSQL and brings the schema up to date (every node may do so at start: the steps run once).
 * A server that cannot be reached or refuses writes is STORE_UNAVAILABLE (saying what to do); a schema newer than
 * this codecall is STORE_ERROR.
 */
export async function createPostgresTaskStore(options: PostgresTaskStoreOptions): Promise<PostgresTaskStore> {
  if (options.signal?.aborted) throw new CodecallError('ABORTED', 'Opening the task store was aborted');
  const schema = options.schema ?? 'codecall';
  const pool = createPool({ ...options, schema });
  const auditKey = options.auditKey ?? undefined;
  try {
    const client = await pool.connect();
    try {
      await migratePostgres(client, schema);
      // The first keyed open keys the schema; another key than the one recorded is AUDIT_KEY_MISMATCH.
      if (auditKey !== undefined) {
        await keySchema(client, auditKey, Date.now());
        await keyApiKeys(client, auditKey);
      }
    } finally {
      client.release();
    }
  } catch (error) {
    await pool.end().catch(() => undefined);
    const mapped = toPgStoreError(error);
    const fault = pgFaultOf(error);
    // A server this node cannot write (a standby, a read-only database) is no more usable than one it cannot reach.
    if (mapped.code === 'STORE_UNAVAILABLE' || fault?.kind === 'read_only') {
      const url = redactUrl(options.url);
      const why = fault === null ? mapped.message : `${pgFaultMessage(fault.kind, url)} (${mapped.message})`;
      throw new CodecallError('STORE_UNAVAILABLE', `cannot open the task store: ${why}`, {
        details: { ...mapped.details, url, ...(fault === null ? {} : { kind: fault.kind }) },
        cause: error,
      });
    }
    throw mapped;
  }
  const listener = (): pg.Client =>
    new pg.Client({
      connectionString: options.url,
      connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000,
      keepAlive: true,
      application_name: 'codecall-listen',
    });
  return new PostgresTaskStore(pool, {
    schema,
    listener,
    server: redactUrl(options.url),
    ...(options.healthCacheMs === undefined ? {} : { healthCacheMs: options.healthCacheMs }),
    ...(options.onHealth ? { onHealth: options.onHealth } : {}),
    ...(auditKey === undefined ? {} : { auditKey }),
  });
}
