import { CodecallError } from '../../errors/index.ts';
import { BODY_CHUNK_BYTES, checkBodyRange } from '../../spec/index.ts';
import type { BodyRef, StoreOptions } from '../../spec/index.ts';
import { rowSpan, sliceRows } from '../body-range.ts';
import { checkUploadRows, uploadBody } from '../body-upload.ts';
import { all, one } from './pg-sql.ts';
import type { Sql } from './pg-sql.ts';

/** Runs statements on the pool (one at a time) or in one transaction; the store's refusals, its errors mapped. */
export interface PgSteps {
  one<T>(signal: AbortSignal | undefined, fn: (sql: Sql) => Promise<T>): Promise<T>;
  tx<T>(signal: AbortSignal | undefined, fn: (sql: Sql) => Promise<T>): Promise<T>;
}

/**
 * BodyStore.putBody on PostgreSQL: each row of the body is its own statement on the pool (no connection is held
 * for a whole body), then one transaction names the body; on failure its rows are deleted.
 */
export async function putBody(
  steps: PgSteps,
  taskId: string,
  chunks: AsyncIterable<Uint8Array>,
  options: StoreOptions & { now?: number },
): Promise<BodyRef> {
  const { signal } = options;
  const found = await steps.one(signal, (sql) =>
    one(sql, 'SELECT 1 AS one FROM tasks WHERE id = $1', [taskId]),
  );
  if (found === undefined) throw new CodecallError('NOT_FOUND', `No task ${taskId}`, { details: { taskId } });
  const now = options.now ?? Date.now();
  return uploadBody(chunks, signal, {
    insertRow: async (upload, n, row) => {
      await steps.one(signal, (sql) =>
        sql.query('INSERT INTO body_chunks (task_id, upload, n, data) VALUES ($1, $2, $3, $4)', [
          taskId,
          upload,
          n,
          row,
        ]),
      );
    },
    name: (upload, ref) =>
      steps.tx(signal, async (sql) => {
        const found = await one<{ count: string; last: number }>(
          sql,
          'SELECT count(*) AS count, coalesce(max(n), -1) AS last FROM body_chunks WHERE task_id = $1 AND upload = $2',
          [taskId, upload],
        );
        checkUploadRows(ref, { count: Number(found?.count ?? 0), last: Number(found?.last ?? -1) });
        const added = await sql.query(
          `INSERT INTO bodies (task_id, sha256, size, chunk_bytes, upload, created_at) VALUES ($1, $2, $3, $4, $5, $6)
           ON CONFLICT (task_id, sha256) DO NOTHING`,
          [taskId, ref.sha256, ref.size, BODY_CHUNK_BYTES, upload, now],
        );
        // The task had these bytes already: they are kept once.
        if (added.rowCount === 0) await dropUpload(sql, taskId, upload);
      }),
    drop: (upload) => steps.one(undefined, (sql) => dropUpload(sql, taskId, upload)),
  });
}

/** BodyStore.sweepUploads: the rows of the task's uploads no body names. */
export async function sweepUploads(sql: Sql, taskId: string): Promise<number> {
  const swept = await sql.query(
    'DELETE FROM body_chunks WHERE task_id = $1 AND upload NOT IN (SELECT upload FROM bodies WHERE task_id = $1)',
    [taskId],
  );
  return swept.rowCount ?? 0;
}

async function dropUpload(sql: Sql, taskId: string, upload: string): Promise<void> {
  await sql.query('DELETE FROM body_chunks WHERE task_id = $1 AND upload = $2', [taskId, upload]);
}

/** One statement: the body's row and the rows of the range (a body is immutable once named). */
export async function readBody(
  sql: Sql,
  taskId: string,
  sha256: string,
  offset: number,
  length: number,
): Promise<Uint8Array | null> {
  checkBodyRange(offset, length);
  const body = await one<{ size: string; chunk_bytes: number; upload: string }>(
    sql,
    'SELECT size, chunk_bytes, upload FROM bodies WHERE task_id = $1 AND sha256 = $2',
    [taskId, sha256],
  );
  if (body === undefined) return null;
  const span = rowSpan(Number(body.size), body.chunk_bytes, offset, length);
  if (span.length === 0) return new Uint8Array(0);
  const rows = await all<{ data: Buffer }>(
    sql,
    'SELECT data FROM body_chunks WHERE task_id = $1 AND upload = $2 AND n BETWEEN $3 AND $4 ORDER BY n',
    [taskId, body.upload, span.first, span.last],
  );
  return sliceRows(
    rows.map((r) => r.data),
    span,
  );
}
