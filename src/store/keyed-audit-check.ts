import { keyFingerprint, keyRowMac, keysMarker, tasksSig } from './audit-macs.ts';
import type { KeyRowFields } from './audit-macs.ts';

// The keyed verification of ADR 0030 over rows read from either database: the stores read (SQLite, PostgreSQL),
// these functions judge, so both name the same findings in the same order.

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

export type KeyRow = KeyRowFields & { mac: string | null };

/** What the database says of its keying as a whole. */
export interface KeyingState {
  /** The `audit_key` row, if any. */
  readonly known: { fingerprint: string; tasks: number; tasks_sig: string } | undefined;
  /** How many tasks there are. */
  readonly tasks: number;
  /** The API keys' keying marker and how many key rows there are (read once the database is keyed). */
  readonly keys: () => { sig: string | null; count: number };
  /** Every API key row, in (created_at, id) order; read only when the marker holds. */
  readonly keyRows: () => Iterable<KeyRow>;
}

export const equal = (a: string, b: string): boolean => a.length === b.length && a === b;

const whole = (kind: AuditFindingKind, message: string): AuditFinding => ({
  kind,
  taskId: '-',
  seq: 0,
  message,
});

/**
 * The database-wide findings: not keyed or keyed with another key (`keyed: false`: nothing more can be checked),
 * else the signed count of tasks and the API key rows.
 */
export function checkKeying(key: Buffer, s: KeyingState): { keyed: boolean; findings: AuditFinding[] } {
  if (s.known === undefined) {
    const findings: AuditFinding[] =
      s.tasks === 0
        ? []
        : [
            whole(
              'not_keyed',
              'the database was never keyed (or its keying was stripped): no row is keyed; `serve` or any writing command with the key keys it',
            ),
          ];
    return { keyed: false, findings };
  }
  if (!equal(s.known.fingerprint, keyFingerprint(key))) {
    return {
      keyed: false,
      findings: [
        whole(
          'key_mismatch',
          'the audit key is not the one this database was keyed with: the key file was replaced, or the key is wrong',
        ),
      ],
    };
  }
  const findings: AuditFinding[] = [];
  if (!equal(s.known.tasks_sig, tasksSig(key, s.known.tasks)))
    findings.push(whole('count_modified', 'the signed count of tasks was edited'));
  else if (s.tasks < s.known.tasks)
    findings.push(
      whole(
        'task_deleted',
        `${s.known.tasks - s.tasks} of the ${s.known.tasks} tasks created were deleted (with their audit rows)`,
      ),
    );
  for (const p of keyRowProblems(key, s))
    findings.push({ ...whole('key_modified', p.message), ...(p.id === '-' ? {} : { field: p.id }) });
  return { keyed: true, findings };
}

/** Each key row that does not verify, and a keying marker gone or forged. */
function keyRowProblems(key: Buffer, s: KeyingState): { id: string; message: string }[] {
  const { sig, count } = s.keys();
  if (sig === null && count === 0) return [];
  if (sig === null)
    return [{ id: '-', message: 'the API keys were never keyed, or their keying marker was removed' }];
  if (sig !== keysMarker(key)) return [{ id: '-', message: 'the API keys keying marker was edited' }];
  const problems: { id: string; message: string }[] = [];
  for (const row of s.keyRows()) {
    if (row.mac === null)
      problems.push({ id: row.id, message: `API key ${row.id} was written without the audit key` });
    else if (row.mac !== keyRowMac(key, row))
      problems.push({
        id: row.id,
        message: `API key ${row.id} was edited (its tenant, role, revocation or hash is not what was keyed)`,
      });
  }
  return problems;
}
