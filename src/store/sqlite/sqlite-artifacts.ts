import { createHash } from 'node:crypto';
import type Database from 'better-sqlite3';
import type { ArtifactInfo, WorkspaceFile } from '../../spec/index.ts';
import { prepared } from './statement-cache.ts';

/** Replaces a task's artifacts (inside the caller's write transaction). */
export function replaceArtifacts(
  db: Database.Database,
  taskId: string,
  files: readonly WorkspaceFile[],
  now: number,
): void {
  prepared(db, 'DELETE FROM artifacts WHERE task_id = ?').run(taskId);
  const insert = prepared(
    db,
    'INSERT INTO artifacts (task_id, name, size, sha256, data, created_at) VALUES (?, ?, ?, ?, ?, ?)',
  );
  for (const f of files) {
    const data = Buffer.from(f.data.buffer, f.data.byteOffset, f.data.byteLength);
    insert.run(taskId, f.name, data.byteLength, createHash('sha256').update(data).digest('hex'), data, now);
  }
}

export function listArtifacts(db: Database.Database, taskId: string): ArtifactInfo[] {
  const rows = prepared(
    db,
    'SELECT name, size, sha256, created_at FROM artifacts WHERE task_id = ? ORDER BY name',
  ).all(taskId) as { name: string; size: number; sha256: string; created_at: number }[];
  return rows.map((r) => ({
    name: r.name,
    size: r.size,
    sha256: r.sha256,
    createdAt: new Date(r.created_at).toISOString(),
  }));
}

export function readArtifact(db: Database.Database, taskId: string, name: string): Uint8Array | null {
  const row = prepared(db, 'SELECT data FROM artifacts WHERE task_id = ? AND name = ?').get(taskId, name) as
    { data: Buffer } | undefined;
  return row ? new Uint8Array(row.data) : null;
}
