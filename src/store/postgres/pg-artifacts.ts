import { createHash } from 'node:crypto';
import type { ArtifactInfo, WorkspaceFile } from '../../spec/index.ts';
import { refreshHead } from './pg-audit-keying.ts';
import { fencedError } from './pg-journal.ts';
import { all, one } from './pg-sql.ts';
import type { Sql } from './pg-sql.ts';
import { CodecallError } from '../../errors/index.ts';

/** ArtifactStore.putArtifacts inside a transaction: fenced on the locked task row, then the files replaced. */
export async function replaceArtifacts(
  sql: Sql,
  key: Buffer | undefined,
  taskId: string,
  files: readonly WorkspaceFile[],
  fencingToken: number,
  now: number,
): Promise<void> {
  const row = await one<{ fencing_token: number }>(
    sql,
    'SELECT fencing_token FROM tasks WHERE id = $1 FOR UPDATE',
    [taskId],
  );
  if (row === undefined) throw new CodecallError('NOT_FOUND', `No task ${taskId}`, { details: { taskId } });
  if (row.fencing_token !== fencingToken) throw fencedError(taskId, fencingToken, row.fencing_token);
  await sql.query('DELETE FROM artifacts WHERE task_id = $1', [taskId]);
  for (const f of files) {
    const data = Buffer.from(f.data.buffer, f.data.byteOffset, f.data.byteLength);
    await sql.query(
      'INSERT INTO artifacts (task_id, name, size, sha256, data, created_at) VALUES ($1, $2, $3, $4, $5, $6)',
      [taskId, f.name, data.byteLength, createHash('sha256').update(data).digest('hex'), data, now],
    );
  }
  // An ended task's head vouches for its artifacts (none written after its end today; kept true if one is).
  await refreshHead(sql, key, taskId);
}

export async function listArtifacts(sql: Sql, taskId: string): Promise<ArtifactInfo[]> {
  const rows = await all<{ name: string; size: number; sha256: string; created_at: number }>(
    sql,
    'SELECT name, size, sha256, created_at FROM artifacts WHERE task_id = $1 ORDER BY name',
    [taskId],
  );
  return rows.map((r) => ({
    name: r.name,
    size: r.size,
    sha256: r.sha256,
    createdAt: new Date(r.created_at).toISOString(),
  }));
}

export async function readArtifact(sql: Sql, taskId: string, name: string): Promise<Uint8Array | null> {
  const row = await one<{ data: Buffer }>(
    sql,
    'SELECT data FROM artifacts WHERE task_id = $1 AND name = $2',
    [taskId, name],
  );
  return row ? new Uint8Array(row.data) : null;
}
