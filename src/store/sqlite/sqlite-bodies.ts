import type Database from 'better-sqlite3';
import { CodecallError } from '../../errors/index.ts';
import { BODY_CHUNK_BYTES, checkBodyRange } from '../../spec/index.ts';
import type { BodyRef, StoreOptions } from '../../spec/index.ts';
import { rowSpan, sliceRows } from '../body-range.ts';
import { checkUploadRows, uploadBody } from '../body-upload.ts';
import { prepared } from './statement-cache.ts';

/** Runs one step on the store's current connection (its refusals, its errors mapped). */
export type SqliteStep = <T>(signal: AbortSignal | undefined, fn: (db: Database.Database) => T) => Promise<T>;

/**
 * BodyStore.putBody on SQLite: each row of the body is its own short write (the connection is never held for a
 * whole body, other writers go between), then one transaction names the body; on failure its rows are deleted.
 */
export async function putBody(
  step: SqliteStep,
  taskId: string,
  chunks: AsyncIterable<Uint8Array>,
  options: StoreOptions & { now?: number },
): Promise<BodyRef> {
  const { signal } = options;
  const found = await step(signal, (db) =>
    prepared(db, 'SELECT 1 AS one FROM tasks WHERE id = ?').get(taskId),
  );
  if (found === undefined) throw new CodecallError('NOT_FOUND', `No task ${taskId}`, { details: { taskId } });
  const now = options.now ?? Date.now();
  return uploadBody(chunks, signal, {
    insertRow: (upload, n, row) =>
      step(signal, (db) => {
        prepared(db, 'INSERT INTO body_chunks (task_id, upload, n, data) VALUES (?, ?, ?, ?)').run(
          taskId,
          upload,
          n,
          row,
        );
      }),
    name: (upload, ref) =>
      step(signal, (db) =>
        db.transaction(() => {
          const found = prepared(
            db,
            'SELECT count(*) AS count, coalesce(max(n), -1) AS last FROM body_chunks WHERE task_id = ? AND upload = ?',
          ).get(taskId, upload) as { count: number; last: number };
          checkUploadRows(ref, found);
          const added = prepared(
            db,
            'INSERT OR IGNORE INTO bodies (task_id, sha256, size, chunk_bytes, upload, created_at) VALUES (?, ?, ?, ?, ?, ?)',
          ).run(taskId, ref.sha256, ref.size, BODY_CHUNK_BYTES, upload, now);
          // The task had these bytes already: they are kept once.
          if (added.changes === 0) dropUpload(db, taskId, upload);
        })(),
      ),
    drop: (upload) => step(undefined, (db) => dropUpload(db, taskId, upload)),
  });
}

/** BodyStore.sweepUploads: the rows of the task's uploads no body names. */
export function sweepUploads(db: Database.Database, taskId: string): number {
  return prepared(
    db,
    'DELETE FROM body_chunks WHERE task_id = ? AND upload NOT IN (SELECT upload FROM bodies WHERE task_id = ?)',
  ).run(taskId, taskId).changes;
}

function dropUpload(db: Database.Database, taskId: string, upload: string): void {
  prepared(db, 'DELETE FROM body_chunks WHERE task_id = ? AND upload = ?').run(taskId, upload);
}

export function readBody(
  db: Database.Database,
  taskId: string,
  sha256: string,
  offset: number,
  length: number,
): Uint8Array | null {
  checkBodyRange(offset, length);
  return db.transaction(() => {
    const body = prepared(
      db,
      'SELECT size, chunk_bytes, upload FROM bodies WHERE task_id = ? AND sha256 = ?',
    ).get(taskId, sha256) as { size: number; chunk_bytes: number; upload: string } | undefined;
    if (body === undefined) return null;
    const span = rowSpan(body.size, body.chunk_bytes, offset, length);
    if (span.length === 0) return new Uint8Array(0);
    const rows = prepared(
      db,
      'SELECT data FROM body_chunks WHERE task_id = ? AND upload = ? AND n BETWEEN ? AND ? ORDER BY n',
    ).all(taskId, body.upload, span.first, span.last) as { data: Buffer }[];
    return sliceRows(
      rows.map((r) => r.data),
      span,
    );
  })();
}
