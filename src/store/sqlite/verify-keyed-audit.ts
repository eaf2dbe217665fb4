import { createHash } from 'node:crypto';
import type Database from 'better-sqlite3';
import type { Head } from '../audit-macs.ts';
import { checkKeying } from '../keyed-audit-check.ts';
import type { KeyedAuditReport, KeyRow } from '../keyed-audit-check.ts';
import { checkTask } from '../keyed-audit-task.ts';
import type { ArtifactFacts, AuditRow, AuditTally, JournalRow } from '../keyed-audit-task.ts';

export type { AuditFinding, AuditFindingKind, KeyedAuditReport } from '../keyed-audit-check.ts';

const bytesSha256 = (data: Buffer): string => createHash('sha256').update(data).digest('hex');

/**
 * Checks every task's audit log against the key (ADR 0030; the checks themselves are shared with PostgreSQL):
 * each keyed row's MACs, the signed head (so a cut-off tail or a deleted head shows), and the task row against
 * what its last row vouches for. Read-only; O(rows).
 */
export function verifyKeyedAudit(db: Database.Database, key: Buffer): KeyedAuditReport {
  const known = db.prepare('SELECT fingerprint, tasks, tasks_sig FROM audit_key WHERE id = 1').get() as
    { fingerprint: string; tasks: number; tasks_sig: string } | undefined;
  const tasks = db.prepare('SELECT count(*) AS n FROM tasks').get() as { n: number };
  const keying = checkKeying(key, {
    known,
    tasks: tasks.n,
    keys: () => {
      const marker = db.prepare('SELECT keys_sig FROM audit_key WHERE id = 1').get() as
        { keys_sig: string | null } | undefined;
      const keys = db.prepare('SELECT count(*) AS n FROM api_keys').get() as { n: number };
      return { sig: marker?.keys_sig ?? null, count: keys.n };
    },
    keyRows: () => db.prepare('SELECT * FROM api_keys ORDER BY created_at, id').iterate() as Iterable<KeyRow>,
  });
  if (!keying.keyed) return { keyed: false, legacyRows: 0, keyedRows: 0, findings: keying.findings };
  const tally: AuditTally = { findings: keying.findings, legacyRows: 0, keyedRows: 0 };
  const heads = db.prepare('SELECT * FROM audit_heads WHERE task_id = ?');
  const rows = db.prepare('SELECT * FROM audit_log WHERE task_id = ? ORDER BY seq');
  const journal = db.prepare('SELECT seq, checksum, created_at FROM journal WHERE task_id = ? ORDER BY seq');
  const artifactRows = db.prepare(
    'SELECT name, size, sha256, data FROM artifacts WHERE task_id = ? ORDER BY name',
  );
  for (const task of db.prepare('SELECT * FROM tasks ORDER BY id').iterate() as IterableIterator<
    Record<string, unknown>
  >) {
    const taskId = String(task.id);
    checkTask(
      key,
      {
        task,
        head: heads.get(taskId) as Head | undefined,
        rows: () => rows.iterate(taskId) as Iterable<AuditRow>,
        journal: () => journal.iterate(taskId) as Iterable<JournalRow>,
        artifacts: () =>
          (artifactRows.all(taskId) as { name: string; size: number; sha256: string; data: Buffer }[]).map(
            (a): ArtifactFacts => ({
              name: a.name,
              size: a.size,
              sha256: a.sha256,
              dataSize: a.data.byteLength,
              dataSha256: bytesSha256(a.data),
            }),
          ),
      },
      tally,
    );
  }
  return { keyed: true, legacyRows: tally.legacyRows, keyedRows: tally.keyedRows, findings: tally.findings };
}

/** `verifyKeyedAudit` over the database file at `path`, opened read-only. */
export async function verifyDatabaseAudit(options: { path: string; key: Buffer }): Promise<KeyedAuditReport> {
  const { default: Sqlite } = await import('better-sqlite3');
  const db = new Sqlite(options.path, { readonly: true, fileMustExist: true });
  try {
    return db.transaction(() => verifyKeyedAudit(db, options.key))();
  } finally {
    db.close();
  }
}
