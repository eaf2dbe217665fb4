import { verifyStore } from '../store/index.ts';
import type { CliIo } from './cli-io.ts';
import { openTaskDb } from './task-db.ts';

/** `codecall audit verify`: every task's journal and audit chains; exit 1 when any link is broken. */
export async function auditVerify(options: { db: string; json?: boolean }, io: CliIo): Promise<number> {
  const store = await openTaskDb(options.db, true);
  try {
    const report = await verifyStore(store);
    const ok = report.broken.length === 0;
    if (options.json) {
      io.stdout(
        `${JSON.stringify({
          ok,
          tasks: report.tasks,
          journal_entries: report.journalEntries,
          audit_entries: report.auditEntries,
          broken: report.broken.map((b) => ({
            task_id: b.taskId,
            log: b.log,
            seq: b.seq,
            message: b.message,
          })),
        })}\n`,
      );
    } else {
      io.stdout(
        `checked ${report.tasks} tasks: ${report.journalEntries} journal entries, ${report.auditEntries} audit entries\n`,
      );
      for (const b of report.broken) io.stdout(`BROKEN ${b.taskId}  ${b.log}  seq ${b.seq}: ${b.message}\n`);
      io.stdout(ok ? 'all chains intact\n' : `${report.broken.length} broken chains\n`);
    }
    return ok ? 0 : 1;
  } finally {
    await store.close();
  }
}
