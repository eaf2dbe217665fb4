import { createHmac } from 'node:crypto';
import { CodecallError } from '../errors/index.ts';
import { canonicalJson, sha256Hex } from './journal-checksum.ts';

/**
 * The keyed audit chain's pure parts (ADR 0030), the same for every database: HMACs, what a row covers of its task,
 * the journal pin, signed heads and counts, API key row MACs. The stores read and write the rows; these say what
 * the MACs are over, so a database copied from one engine to the other verifies with the same key.
 */

export const TERMINAL = new Set(['succeeded', 'failed', 'cancelled']);

export function hmac(key: Buffer, value: unknown): string {
  return createHmac('sha256', key).update(canonicalJson(value)).digest('hex');
}

export function keyFingerprint(key: Buffer): string {
  return hmac(key, 'codecall audit key v1');
}

/** Opening a keyed database with another key: appending with it would make rows no one can verify. */
export function keyMismatchError(): CodecallError {
  return new CodecallError(
    'AUDIT_KEY_MISMATCH',
    'the audit key is not the one this database was keyed with (replaced key file, or the wrong CODECALL_AUDIT_KEY)',
  );
}

/**
 * The task fields a row vouches for: identity and what the submitter asked for always, outcome digests, and once
 * terminal `updated_at` and the logs; plus the journal pin (`extendPin`).
 */
export type Covers = Record<string, string | number | null>;

export type CoveredRow = {
  tenant: string;
  created_at: number;
  session_id: string | null;
  batch_id: string | null;
  priority: number;
  callback_url: string | null;
  max_retries: number;
  deadline_at: number | null;
  status: string;
  pause_reason: string | null;
  error: string | null;
  result: string | null;
  execution_log: string | null;
  resources: string | null;
  updated_at: number;
};

/** The task columns the covers are computed from (a SELECT list). */
export const COVERED_COLUMNS = `tenant, created_at, session_id, batch_id, priority, callback_url, max_retries,
  deadline_at, status, pause_reason, error, result, execution_log, resources, updated_at`;

/** Covers fields checked against the journal, not against the task row. */
export const JOURNAL_FIELDS = new Set(['journal_seq', 'journal_digest']);

const digest = (text: string | null): string | null => (text === null ? null : sha256Hex(text));

/** What the covers vouch for of a task's artifacts: each one's name, size and SHA-256, in name order. */
export function artifactsDigest(files: readonly { name: string; size: number; sha256: string }[]): string {
  return sha256Hex(canonicalJson(files.map((f) => [f.name, f.size, f.sha256])));
}

/** `artifacts`: the task's artifacts digest (artifactsDigest), read only for an ended task. */
export function coversOf(row: CoveredRow, input: string, artifacts: () => string): Covers {
  // Logs change while a task runs without a head refresh: vouched for once it ended, like updated_at.
  const ended = TERMINAL.has(row.status);
  return {
    tenant: row.tenant,
    created_at: row.created_at,
    session_id: row.session_id,
    batch_id: row.batch_id,
    input,
    priority: row.priority,
    callback_url: row.callback_url,
    max_retries: row.max_retries,
    deadline_at: row.deadline_at,
    status: row.status,
    pause_reason: row.pause_reason,
    error: digest(row.error),
    result: digest(row.result),
    execution_log: ended ? digest(row.execution_log) : null,
    resources: ended ? digest(row.resources) : null,
    updated_at: ended ? row.updated_at : null,
    // The files a finished task left (a report, a chart): written before its end, vouched for from it.
    artifacts: ended ? artifacts() : null,
  };
}

/** The input digest a head already vouches for (inputs may be large: not hashed again), or undefined. */
export function vouchedInput(vouched: Covers | undefined): string | undefined {
  const known = vouched?.input;
  return typeof known === 'string' ? known : undefined;
}

/**
 * One link of the journal's keyed pin: the unkeyed journal chain has no key (a rewrite can recompute it) and its
 * checksums leave out the time, so each audit row vouches for a digest over every entry's checksum and time.
 */
export function journalDigestStep(prev: string, e: { seq: number; checksum: string; created_at: number }) {
  return sha256Hex(`${prev}\n${e.seq}\n${e.checksum}\n${e.created_at}`);
}

/** Where the pin after `from` (the last pin; none: the journal's start) starts: read entries after `seq`. */
export function pinStart(from: Covers | undefined): { journal_seq: number; journal_digest: string } {
  return {
    journal_seq: typeof from?.journal_seq === 'number' ? from.journal_seq : 0,
    journal_digest: typeof from?.journal_digest === 'string' ? from.journal_digest : '',
  };
}

/** The pin extended over the entries appended since (in seq order). */
export function extendPin(
  pin: { journal_seq: number; journal_digest: string },
  entries: Iterable<{ seq: number; checksum: string; created_at: number }>,
): { journal_seq: number; journal_digest: string } {
  let seq = pin.journal_seq;
  let d = pin.journal_digest;
  for (const e of entries) {
    d = journalDigestStep(d, e);
    seq = e.seq;
  }
  return { journal_seq: seq, journal_digest: d };
}

export interface Head {
  readonly task_id: string;
  /** Rows up to this seq were written before the database was keyed (unkeyed, "legacy"). */
  readonly legacy_seq: number;
  readonly seq: number;
  readonly mac: string;
  readonly covers: string;
  readonly sig: string;
}

export function headSig(key: Buffer, h: Omit<Head, 'sig'>): string {
  return hmac(key, ['head', h.task_id, h.legacy_seq, h.seq, h.mac, h.covers]);
}

/** What a keyed row's two MACs cover. */
export function dataMac(
  key: Buffer,
  r: { task_id: string; seq: number; type: string; data: string },
): string {
  return hmac(key, ['audit-data', r.task_id, r.seq, r.type, r.data]);
}

export function linkMac(
  key: Buffer,
  prevMac: string,
  r: {
    task_id: string;
    seq: number;
    type: string;
    data: string;
    checksum: string;
    created_at: number;
    covers: string;
    data_mac: string;
  },
): string {
  return hmac(key, [
    'audit-link',
    prevMac,
    r.task_id,
    r.seq,
    r.type,
    r.data,
    r.checksum,
    r.created_at,
    r.covers,
    r.data_mac,
  ]);
}

/** The signed count of tasks: a task deleted with its rows and head (the cascade) still shows. */
export function tasksSig(key: Buffer, tasks: number): string {
  return hmac(key, ['tasks', tasks]);
}

/** The columns of an api_keys row the MAC covers (all but the MAC). */
export interface KeyRowFields {
  readonly id: string;
  readonly key_hash: string;
  readonly tenant: string;
  readonly role: string;
  readonly name: string | null;
  readonly created_at: number;
  readonly revoked_at: number | null;
}

export function keyRowMac(key: Buffer, r: KeyRowFields): string {
  return hmac(key, ['api_key', r.id, r.key_hash, r.tenant, r.role, r.name, r.created_at, r.revoked_at]);
}

/** The signed marker (`audit_key.keys_sig`) saying every key row was keyed with this key. */
export function keysMarker(key: Buffer): string {
  return hmac(key, 'api keys keyed v1');
}

/** A key row that is not as the key wrote it authenticates no one. */
export function keyRowRefused(id: string): CodecallError {
  return new CodecallError(
    'UNAUTHORIZED',
    `API key ${id} is refused: its record does not verify against the audit key (edited, or written without the key)`,
    { details: { keyId: id } },
  );
}
