import { canonicalJson, journalChecksumOfText, sha256Hex } from './journal-checksum.ts';
import {
  artifactsDigest,
  coversOf,
  dataMac,
  headSig,
  JOURNAL_FIELDS,
  journalDigestStep,
  linkMac,
} from './audit-macs.ts';
import type { Covers, Head } from './audit-macs.ts';
import { equal } from './keyed-audit-check.ts';
import type { AuditFinding, AuditFindingKind } from './keyed-audit-check.ts';

export interface AuditRow {
  task_id: string;
  seq: number;
  type: string;
  data: string;
  checksum: string;
  created_at: number;
  covers: string | null;
  data_mac: string | null;
  mac: string | null;
}

export interface JournalRow {
  seq: number;
  checksum: string;
  created_at: number;
}

/** An artifact as stored (what lists show) and as its data gives it (size and SHA-256 of the bytes). */
export interface ArtifactFacts {
  readonly name: string;
  readonly size: number;
  readonly sha256: string;
  readonly dataSize: number;
  readonly dataSha256: string;
}

/** One task as the keyed check reads it; the thunks are called only when needed, in this order. */
export interface TaskAudit {
  /** The whole task row (with `id` and `input`). */
  readonly task: Record<string, unknown>;
  readonly head: Head | undefined;
  /** Its audit rows in seq order. */
  readonly rows: () => Iterable<AuditRow>;
  /** Its journal's seq, checksum and time in seq order. */
  readonly journal: () => Iterable<JournalRow>;
  /** Its artifacts in name order (bytewise). */
  readonly artifacts: () => readonly ArtifactFacts[];
}

export interface AuditTally {
  readonly findings: AuditFinding[];
  legacyRows: number;
  keyedRows: number;
}

/**
 * One task's audit log against the key: each keyed row's MACs, the signed head (so a cut-off tail or a deleted
 * head shows), the journal against its pins, and the task row against what its head vouches for.
 */
export function checkTask(key: Buffer, t: TaskAudit, tally: AuditTally): void {
  const taskId = String(t.task.id);
  const head = t.head;
  const add = (kind: AuditFindingKind, seq: number, message: string, field?: string): void => {
    tally.findings.push({ kind, taskId, seq, message, ...(field === undefined ? {} : { field }) });
  };
  if (head === undefined) {
    add('head_missing', 0, `task ${taskId} has no signed audit head (deleted, or written without the key)`);
    return;
  }
  if (!equal(head.sig, headSig(key, head))) {
    add('head_modified', head.seq, `the signed audit head of task ${taskId} does not verify (edited)`);
    return;
  }
  let expected = 1;
  let prevMac = '';
  let prevChecksum = '';
  let last: AuditRow | undefined;
  const pins: Pin[] = [];
  for (const row of t.rows()) {
    // After a deleted row the next one's link cannot match: the deletion is the finding, not that row.
    const gap = expected < row.seq;
    for (; expected < row.seq; expected++)
      add('row_deleted', expected, `audit row seq ${expected} of task ${taskId} was deleted`);
    expected = row.seq + 1;
    const chained = journalChecksumOfText(prevChecksum, row.seq, row.type, row.data) === row.checksum;
    if (row.seq <= head.legacy_seq) {
      tally.legacyRows++;
    } else if (row.mac === null || row.data_mac === null || row.covers === null) {
      add('row_unkeyed', row.seq, `audit row seq ${row.seq} of task ${taskId} was written without the key`);
    } else {
      tally.keyedRows++;
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
  checkJournal(t.journal(), pins, taskId, add);
  taskFields(t.task, head, t.artifacts(), add);
}

/** What one keyed row (or the head, at its seq) vouches for of the journal. */
interface Pin {
  readonly auditSeq: number;
  readonly journalSeq: number;
  readonly digest: string;
}

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
  entries: Iterable<JournalRow>,
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
  artifacts: readonly ArtifactFacts[],
  add: (kind: AuditFindingKind, seq: number, message: string, field?: string) => void,
): void {
  // What lists show of an artifact (its stored size and digest) must be its data's, whatever the head vouches for.
  for (const a of artifacts) {
    if (a.size !== a.dataSize || a.sha256 !== a.dataSha256)
      add(
        'task_field_modified',
        head.seq,
        `task ${String(task.id)}: the stored size or digest of artifact ${a.name} is not its data's`,
        'artifacts',
      );
  }
  const vouched = JSON.parse(head.covers) as Covers;
  // The artifacts digest as the data gives it (not the stored sizes and digests, which an edit could leave).
  const now = coversOf(task as Parameters<typeof coversOf>[0], sha256Hex(String(task.input)), () =>
    artifactsDigest(artifacts.map((a) => ({ name: a.name, size: a.dataSize, sha256: a.dataSha256 }))),
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
