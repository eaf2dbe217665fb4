import { CodecallError } from '../../errors/index.ts';
import { toPgStoreError } from './pg-errors.ts';
import { migratePostgres } from './pg-migrations.ts';
import { createPool } from './pg-pool.ts';
import type { PostgresPoolOptions } from './pg-pool.ts';
import { PostgresTaskStore } from './pg-task-store.ts';
import { redactUrl } from './pg-url.ts';

export { isPostgresUrl, redactUrl } from './pg-url.ts';

export interface PostgresTaskStoreOptions extends PostgresPoolOptions {
  readonly signal?: AbortSignal;
}

/**
 * Connects to PostgreSQL and brings the schema up to date (every node may do so at start: the steps run once).
 * A server that cannot be reached is STORE_UNAVAILABLE; a schema newer than this codecall is STORE_ERROR.
 */
export async function createPostgresTaskStore(options: PostgresTaskStoreOptions): Promise<PostgresTaskStore> {
  if (options.signal?.aborted) throw new CodecallError('ABORTED', 'Opening the task store was aborted');
  const schema = options.schema ?? 'codecall';
  const pool = createPool({ ...options, schema });
  try {
    const client = await pool.connect();
    try {
      await migratePostgres(client, schema);
    } finally {
      client.release();
    }
  } catch (error) {
    await pool.end().catch(() => undefined);
    const mapped = toPgStoreError(error);
    if (mapped.code === 'STORE_UNAVAILABLE') {
      throw new CodecallError('STORE_UNAVAILABLE', `cannot open the task store: ${mapped.message}`, {
        details: { ...mapped.details, url: redactUrl(options.url) },
        cause: error,
      });
    }
    throw mapped;
  }
  return new PostgresTaskStore(pool, { schema });
}
