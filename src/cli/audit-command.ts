import { readFile, writeFile } from 'node:fs/promises';
import { CodecallError } from '../errors/index.ts';
import { anchorDatabase, verifyDatabaseAnchor, verifyStore } from '../store/index.ts';
import type { AnchorProblem, AuditAnchor } from '../store/index.ts';
import { resolveAuditKey } from './audit-key.ts';
import type { AuditKeyOptions } from './audit-key.ts';
import type { CliIo } from './cli-io.ts';
import { openTaskDb } from './task-db.ts';

export interface AuditVerifyOptions extends AuditKeyOptions {
  readonly json?: boolean;
  /** An anchor written earlier by `codecall audit anchor`. */
  readonly anchor?: string;
}

/**
 * `codecall audit verify`: every task's journal and audit chains, and with --anchor the keyed anchor too; exit 1
 * when anything is broken. The chains alone are unkeyed: a rewrite that recomputes them passes, so without an
 * anchor the report says so.
 */
export async function auditVerify(options: AuditVerifyOptions, io: CliIo): Promise<number> {
  const store = await openTaskDb(options.db, true);
  let report: Awaited<ReturnType<typeof verifyStore>>;
  try {
    report = await verifyStore(store);
  } finally {
    await store.close();
  }
  let problems: AnchorProblem[] = [];
  if (options.anchor !== undefined) {
    const key = await resolveAuditKey({ ...options, create: false });
    const anchor = await readAnchor(options.anchor);
    problems =
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
  }
  const ok = report.broken.length === 0 && problems.length === 0;
  if (options.json) {
    io.stdout(
      `${JSON.stringify({
        ok,
        keyed: options.anchor !== undefined,
        tasks: report.tasks,
        journal_entries: report.journalEntries,
        audit_entries: report.auditEntries,
        broken: [
          ...report.broken.map((b) => ({
            task_id: b.taskId,
            log: b.log,
            seq: b.seq,
            kind: 'chain',
            message: b.message,
          })),
          ...problems.map((p) => ({
            task_id: p.taskId,
            log: p.log,
            seq: p.seq,
            kind: p.kind,
            message: p.message,
          })),
        ],
      })}\n`,
    );
  } else {
    io.stdout(
      `checked ${report.tasks} tasks: ${report.journalEntries} journal entries, ${report.auditEntries} audit entries\n`,
    );
    for (const b of report.broken) io.stdout(`BROKEN ${b.taskId}  ${b.log}  seq ${b.seq}: ${b.message}\n`);
    for (const p of problems)
      io.stdout(`BROKEN ${p.taskId}  ${p.log}  seq ${p.seq}  ${p.kind}: ${p.message}\n`);
    if (options.anchor === undefined)
      io.stdout('note: chains checked unkeyed (no --anchor): a recomputed rewrite would not show\n');
    const count = report.broken.length + problems.length;
    io.stdout(ok ? 'all chains intact\n' : `${count} broken chains\n`);
  }
  return ok ? 0 : 1;
}

/** `codecall audit anchor`: a keyed, signed summary of the database now, to a file or stdout. */
export async function auditAnchor(options: AuditKeyOptions & { out?: string }, io: CliIo): Promise<number> {
  // Open through the store first: a missing or unmigrated file is refused the way every command refuses it.
  await (await openTaskDb(options.db, true)).close();
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
