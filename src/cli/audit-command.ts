import { readFile, writeFile } from 'node:fs/promises';
import { CodecallError } from '../errors/index.ts';
import {
  anchorDatabase,
  resolveAuditKey,
  verifyDatabaseAnchor,
  verifyDatabaseAudit,
  verifyStore,
} from '../store/index.ts';
import type {
  AnchorProblem,
  AuditAnchor,
  AuditKeyOptions,
  KeyedAuditReport,
  StoreIntegrity,
} from '../store/index.ts';
import { isPostgresUrl } from '../store/postgres/create-postgres-task-store.ts';
import type { CliIo } from './cli-io.ts';
import { openTaskDb } from './task-db.ts';

export interface AuditVerifyOptions extends AuditKeyOptions {
  readonly json?: boolean;
  /** An anchor written earlier by `codecall audit anchor`. */
  readonly anchor?: string;
  /** With a postgres:// --db: the schema (default `codecall`). */
  readonly schema?: string;
}

/** One finding as `audit verify` prints it: `source` says which check found it. */
interface Finding {
  readonly source: 'chain' | 'keyed' | 'anchor';
  readonly task_id: string;
  readonly log: string;
  readonly seq: number;
  readonly kind: string;
  readonly field?: string;
  /** anchor_mismatch: edited-row, edited-field:NAME, missing-rows, missing-task, bad-key. */
  readonly detail?: string;
  readonly message: string;
}

/** The SQLite file's unkeyed chains, and the keyed check with the key found the way `serve` finds it. */
async function verifySqliteDb(
  options: AuditVerifyOptions,
): Promise<{ report: StoreIntegrity; key: Buffer | null; keyed: KeyedAuditReport | null }> {
  const store = await openTaskDb(options.db, true, { auditKey: 'none' });
  let report: StoreIntegrity;
  try {
    report = await verifyStore(store);
  } finally {
    await store.close();
  }
  const key = await resolveAuditKey({ ...options, create: false });
  const keyed = key === null ? null : await verifyDatabaseAudit({ path: options.db, key });
  return { report, key, keyed };
}

/**
 * `codecall audit verify`: every task's unkeyed journal and audit chains; with the audit key (found the way
 * `serve` finds it; for a postgres:// database given by --key, --key-file or the environment) the keyed audit
 * chain, signed heads and task fields (ADR 0030); with --anchor (SQLite) the keyed anchor too (ADR 0025). Exit 1
 * when anything is found. The database is only read.
 */
export async function auditVerify(options: AuditVerifyOptions, io: CliIo): Promise<number> {
  const postgres = isPostgresUrl(options.db);
  const { report, key, keyed } = postgres
    ? { ...(await (await import('./audit-postgres.ts')).verifyPostgresDb(options)), key: null }
    : await verifySqliteDb(options);
  const findings: Finding[] = report.broken.map((b) => ({
    source: 'chain',
    task_id: b.taskId,
    log: b.log,
    seq: b.seq,
    kind: 'chain',
    message: b.message,
  }));
  for (const f of keyed?.findings ?? [])
    findings.push({
      source: 'keyed',
      task_id: f.taskId,
      log: f.taskId === '-' ? 'database' : f.kind === 'task_field_modified' ? 'task' : 'audit',
      seq: f.seq,
      kind: f.kind,
      ...(f.field === undefined ? {} : { field: f.field }),
      message: f.message,
    });
  if (options.anchor !== undefined) {
    const anchor = await readAnchor(options.anchor);
    const problems: AnchorProblem[] =
      key === null
        ? [
            {
              taskId: '-',
              log: 'anchor',
              seq: 0,
              kind: 'bad-key',
              message: 'no audit key (--key, --key-file, CODECALL_AUDIT_KEY or <db>.audit-key): unverifiable',
            },
          ]
        : await verifyDatabaseAnchor({ path: options.db, key, anchor });
    for (const p of problems)
      findings.push({
        source: 'anchor',
        task_id: p.taskId,
        log: p.log,
        seq: p.seq,
        // One kind for the anchor's findings; what differed (ADR 0025's kinds) is the detail.
        kind: 'anchor_mismatch',
        detail: p.kind,
        message: p.message,
      });
  }
  const ok = findings.length === 0;
  if (options.json) {
    io.stdout(
      `${JSON.stringify({
        ok,
        keyed: keyed?.keyed ?? false,
        anchored: options.anchor !== undefined,
        tasks: report.tasks,
        journal_entries: report.journalEntries,
        audit_entries: report.auditEntries,
        keyed_audit_entries: keyed?.keyedRows ?? 0,
        legacy_audit_entries: keyed?.legacyRows ?? 0,
        broken: findings,
      })}\n`,
    );
  } else {
    io.stdout(
      `checked ${report.tasks} tasks: ${report.journalEntries} journal entries, ${report.auditEntries} audit entries\n`,
    );
    for (const f of findings)
      io.stdout(
        f.source === 'chain'
          ? `BROKEN ${f.task_id}  ${f.log}  seq ${f.seq}: ${f.message}\n`
          : `BROKEN ${f.task_id}  ${f.log}  seq ${f.seq}  ${f.detail ?? f.kind}: ${f.message}\n`,
      );
    if (keyed === null)
      io.stdout(
        postgres
          ? 'note: no audit key given (--key, --key-file, CODECALL_AUDIT_KEY or CODECALL_AUDIT_KEY_FILE): chains checked unkeyed, a recomputed rewrite would not show\n'
          : 'note: no audit key found: chains checked unkeyed, a recomputed rewrite would not show\n',
      );
    else if (keyed.keyed && keyed.legacyRows > 0)
      io.stdout(
        `note: ${keyed.legacyRows} legacy audit entries (written before the database was keyed) checked unkeyed\n`,
      );
    io.stdout(ok ? 'all chains intact\n' : `${findings.length} findings\n`);
  }
  return ok ? 0 : 1;
}

/** `codecall audit anchor`: a keyed, signed summary of the database now, to a file or stdout. */
export async function auditAnchor(options: AuditKeyOptions & { out?: string }, io: CliIo): Promise<number> {
  if (isPostgresUrl(options.db))
    throw new CodecallError(
      'INVALID_ARGUMENT',
      'audit anchor reads SQLite databases only (not a postgres:// URL)',
      {
        details: { field: 'db' },
      },
    );
  // Open through the store first: a missing or unmigrated file is refused the way every command refuses it.
  await (await openTaskDb(options.db, true, { auditKey: 'none' })).close();
  const key = await resolveAuditKey({ ...options, create: true, note: io.stderr });
  if (key === null) throw new CodecallError('NOT_FOUND', 'no audit key');
  const anchor = await anchorDatabase({ path: options.db, key });
  const text = `${JSON.stringify(anchor)}\n`;
  if (options.out === undefined) io.stdout(text);
  else {
    await writeFile(options.out, text);
    io.stdout(`anchored ${Object.keys(anchor.tasks).length} tasks to ${options.out}\n`);
  }
  return 0;
}

async function readAnchor(path: string): Promise<AuditAnchor> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(path, 'utf8'));
  } catch (e) {
    throw new CodecallError('INVALID_ARGUMENT', `cannot read anchor ${path}`, { cause: e });
  }
  if (parsed === null || typeof parsed !== 'object' || (parsed as { version?: unknown }).version !== 1)
    throw new CodecallError('INVALID_ARGUMENT', `${path} is not a codecall audit anchor (version 1)`);
  return parsed as AuditAnchor;
}
