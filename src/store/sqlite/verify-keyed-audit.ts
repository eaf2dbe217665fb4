import { createHash } from 'node:crypto';
import type Database from 'better-sqlite3';
import { canonicalJson, journalChecksumOfText, sha256Hex } from '../journal-checksum.ts';
import type { Covers, Head } from './audit-keying.ts';
import { keyRowProblems } from './api-key-macs.ts';
import {
  artifactsDigest,
  coversOf,
  dataMac,
  headSig,
  JOURNAL_FIELDS,
  journalDigestStep,
  keyFingerprint,
  linkMac,
  tasksSig,
} from './audit-keying.ts';

/** What `audit verify` names (ADR 0030). */
export type AuditFindingKind =
  | 'not_keyed'
  | 'key_mismatch'
  | 'task_deleted'
  | 'count_modified'
  | 'head_missing'
  | 'head_modified'
  | 'row_modified'
  | 'row_deleted'
  | 'row_unkeyed'
  | 'truncated'
  | 'chain_recomputed_without_key'
  | 'task_field_modified'
  | 'journal_modified'
  | 'key_modified';

export interface AuditFinding {
  readonly kind: AuditFindingKind;
  /** '-' for a finding about the whole database. */
  readonly taskId: string;
  readonly seq: number;
  /** task_field_modified: the field; key_modified: the API key's id. */
  readonly field?: string;
  readonly message: string;
}

export interface KeyedAuditReport {
  /** Whether the database is keyed and the key matches (the chains were checked keyed). */
  readonly keyed: boolean;
  /** Rows written before the database was keyed: covered by the unkeyed chain only. */
  readonly legacyRows: number;
  readonly keyedRows: number;
  readonly findings: readonly AuditFinding[];
}

type AuditRow = {
  task_id: string;
  seq: number;
  type: string;
  data: string;
  checksum: string;
  created_at: number;
  covers: string | null;
  data_mac: string | null;
  mac: string | null;
};

const equal = (a: string, b: string): boolean => a.length === b.length && a === b;

/**
 * Checks every task's audit log against the key: each keyed row's MACs, the signed head (so a cut-off tail or a
 * deleted head shows), and the task row against what its last row vouches for. Read-only; O(rows).
 */
export function verifyKeyedAudit(db: Database.Database, key: Buffer): KeyedAuditReport {
  const known = db.prepare('SELECT fingerprint, tasks, tasks_sig FROM audit_key WHERE id = 1').get() as
    { fingerprint: string; tasks: number; tasks_sig: string } | undefined;
  const tasks = db.prepare('SELECT count(*) AS n FROM tasks').get() as { n: number };
  if (known === undefined) {
    const findings: AuditFinding[] =
      tasks.n === 0
        ? []
        : [
            {
              kind: 'not_keyed',
              taskId: '-',
              seq: 0,
              message:
                'the database was never keyed (or its keying was stripped): no row is keyed; `serve` or any writing command with the key keys it',
            },
          ];
    return { keyed: false, legacyRows: 0, keyedRows: 0, findings };
  }
  if (!equal(known.fingerprint, keyFingerprint(key))) {
    return {
      keyed: false,
      legacyRows: 0,
      keyedRows: 0,
      findings: [
        {
          kind: 'key_mismatch',
          taskId: '-',
          seq: 0,
          message:
            'the audit key is not the one this database was keyed with: the key file was replaced, or the key is wrong',
        },
      ],
    };
  }
  const findings: AuditFinding[] = [];
  if (!equal(known.tasks_sig, tasksSig(key, known.tasks)))
    findings.push({
      kind: 'count_modified',
      taskId: '-',
      seq: 0,
      message: 'the signed count of tasks was edited',
    });
  else if (tasks.n < known.tasks)
    findings.push({
      kind: 'task_deleted',
      taskId: '-',
      seq: 0,
      message: `${known.tasks - tasks.n} of the ${known.tasks} tasks created were deleted (with their audit rows)`,
    });
  for (const p of keyRowProblems(db, key))
    findings.push({
      kind: 'key_modified',
      taskId: '-',
      seq: 0,
      message: p.message,
      ...(p.id === '-' ? {} : { field: p.id }),
    });
  let legacyRows = 0;
  let keyedRows = 0;
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
    const head = heads.get(taskId) as Head | undefined;
    const add = (kind: AuditFindingKind, seq: number, message: string, field?: string): void => {
      findings.push({ kind, taskId, seq, message, ...(field === undefined ? {} : { field }) });
    };
    if (head === undefined) {
      add('head_missing', 0, `task ${taskId} has no signed audit head (deleted, or written without the key)`);
      continue;
    }
    if (!equal(head.sig, headSig(key, head))) {
      add('head_modified', head.seq, `the signed audit head of task ${taskId} does not verify (edited)`);
      continue;
    }
    let expected = 1;
    let prevMac = '';
    let prevChecksum = '';
    let last: AuditRow | undefined;
    const pins: Pin[] = [];
    for (const row of rows.iterate(taskId) as IterableIterator<AuditRow>) {
      // After a deleted row the next one's link cannot match: the deletion is the finding, not that row.
      const gap = expected < row.seq;
      for (; expected < row.seq; expected++)
        add('row_deleted', expected, `audit row seq ${expected} of task ${taskId} was deleted`);
      expected = row.seq + 1;
      const chained = journalChecksumOfText(prevChecksum, row.seq, row.type, row.data) === row.checksum;
      if (row.seq <= head.legacy_seq) {
        legacyRows++;
      } else if (row.mac === null || row.data_mac === null || row.covers === null) {
        add('row_unkeyed', row.seq, `audit row seq ${row.seq} of task ${taskId} was written without the key`);
      } else {
        keyedRows++;
        pins.push(...pinOf(row.covers, row.seq));
        if (!equal(row.data_mac, dataMac(key, row))) {
          // Its type or data changed. An intact unkeyed chain means the checksums were recomputed to match.
          if (chained)
            add(
              'chain_recomputed_without_key',
              row.seq,
              `audit row seq ${row.seq} of task ${taskId} was rewritten and its unkeyed checksums recomputed`,
            );
          else add('row_modified', row.seq, `audit row seq ${row.seq} of task ${taskId} was edited`);
        } else if (
          !gap &&
          !equal(row.mac, linkMac(key, prevMac, { ...row, covers: row.covers, data_mac: row.data_mac }))
        ) {
          add(
            'row_modified',
            row.seq,
            `audit row seq ${row.seq} of task ${taskId} was edited (its time, what it vouches for, or its link)`,
          );
        }
      }
      prevMac = row.mac ?? '';
      prevChecksum = row.checksum;
      last = row;
    }
    const end = last?.seq ?? 0;
    if (end < head.seq) {
      add(
        'truncated',
        end + 1,
        `the audit log of task ${taskId} ends at seq ${end}, its signed head at seq ${head.seq}: rows were removed`,
      );
    } else if (end > head.seq) {
      add(
        'row_unkeyed',
        head.seq + 1,
        `audit rows after seq ${head.seq} of task ${taskId} are not in its head`,
      );
    } else if (end > head.legacy_seq && last !== undefined && !equal(last.mac ?? '', head.mac)) {
      add('row_modified', end, `audit row seq ${end} of task ${taskId} is not the one its signed head names`);
    }
    pins.push(...pinOf(head.covers, head.seq));
    checkJournal(journal.iterate(taskId) as IterableIterator<JournalRow>, pins, taskId, add);
    taskFields(task, head, artifactRows.all(taskId) as ArtifactRow[], add);
  }
  return { keyed: true, legacyRows, keyedRows, findings };
}

/** What one keyed row (or the head, at its seq) vouches for of the journal. */
interface Pin {
  readonly auditSeq: number;
  readonly journalSeq: number;
  readonly digest: string;
}

type JournalRow = { seq: number; checksum: string; created_at: number };

function pinOf(covers: string, auditSeq: number): Pin[] {
  let c: Covers;
  try {
    c = JSON.parse(covers) as Covers;
  } catch {
    return [];
  }
  // Rows written before the journal was pinned carry none.
  if (typeof c.journal_seq !== 'number' || typeof c.journal_digest !== 'string') return [];
  return [{ auditSeq, journalSeq: c.journal_seq, digest: c.journal_digest }];
}

/**
 * The journal against every pin, in one pass: an entry rewritten (even with its unkeyed chain recomputed),
 * re-timed, removed or put in from elsewhere changes the digest at every pin from its seq on.
 */
function checkJournal(
  entries: IterableIterator<JournalRow>,
  pins: Pin[],
  taskId: string,
  add: (kind: AuditFindingKind, seq: number, message: string) => void,
): void {
  const bySeq = new Map<number, Pin[]>();
  for (const p of pins) bySeq.set(p.journalSeq, [...(bySeq.get(p.journalSeq) ?? []), p]);
  const found = new Set<number>();
  const check = (seq: number, digest: string): void => {
    for (const p of bySeq.get(seq) ?? []) {
      if (!equal(digest, p.digest) && !found.has(p.journalSeq)) {
        found.add(p.journalSeq);
        add(
          'journal_modified',
          p.auditSeq,
          `the journal of task ${taskId} up to seq ${p.journalSeq} is not what audit seq ${p.auditSeq} vouched for (entries rewritten, re-timed, removed or added)`,
        );
      }
    }
    bySeq.delete(seq);
  };
  let d = '';
  let at = 0;
  check(0, d);
  for (const e of entries) {
    // A gap: the pins between the entries around it cannot hold.
    for (const seq of [...bySeq.keys()]) if (seq > at && seq < e.seq) check(seq, 'missing');
    d = journalDigestStep(d, e);
    at = e.seq;
    check(at, d);
  }
  for (const seq of [...bySeq.keys()]) check(seq, 'missing');
}

/** The task row against what its signed head vouches for (a copy of its last row's `covers`). */
function taskFields(
  task: Record<string, unknown>,
  head: Head,
  artifacts: readonly ArtifactRow[],
  add: (kind: AuditFindingKind, seq: number, message: string, field?: string) => void,
): void {
  // What lists show of an artifact (its stored size and digest) must be its data's, whatever the head vouches for.
  for (const a of artifacts) {
    if (a.size !== a.data.byteLength || a.sha256 !== bytesSha256(a.data))
      add(
        'task_field_modified',
        head.seq,
        `task ${String(task.id)}: the stored size or digest of artifact ${a.name} is not its data's`,
        'artifacts',
      );
  }
  const vouched = JSON.parse(head.covers) as Covers;
  const now = coversOf(task as Parameters<typeof coversOf>[0], sha256Hex(String(task.input)), () =>
    artifactsFromData(artifacts),
  );
  for (const [field, value] of Object.entries(vouched)) {
    if (JOURNAL_FIELDS.has(field)) continue;
    if (canonicalJson(now[field] ?? null) === canonicalJson(value)) continue;
    add(
      'task_field_modified',
      head.seq,
      `task ${String(task.id)}: ${field} differs from what audit seq ${head.seq} recorded`,
      field,
    );
  }
}

interface ArtifactRow {
  readonly name: string;
  readonly size: number;
  readonly sha256: string;
  readonly data: Buffer;
}

const bytesSha256 = (data: Buffer): string => createHash('sha256').update(data).digest('hex');

/** The artifacts digest as the data gives it (not the stored sizes and digests, which an edit could leave). */
function artifactsFromData(rows: readonly ArtifactRow[]): string {
  return artifactsDigest(
    rows.map((r) => ({ name: r.name, size: r.data.byteLength, sha256: bytesSha256(r.data) })),
  );
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
