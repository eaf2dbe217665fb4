import { inspect } from 'node:util';
import { pendingApprovals, TaskRunner } from '../durable/index.ts';
import { CodecallError } from '../errors/index.ts';
import { createQuickJsDriver } from '../sandbox/index.ts';
import type { JournalEntry, TaskRecord, TaskStore, ToolDefinition } from '../spec/index.ts';
import { ToolRegistry } from '../tools/index.ts';
import type { CliIo } from './exec-command.ts';
import { toJsonView } from '../codec/index.ts';
import { taskOutcomeJson, taskResult } from './task-view.ts';

export interface RunStoredTaskOptions {
  readonly store: TaskStore;
  readonly taskId: string;
  readonly tools: readonly ToolDefinition[];
  readonly dbPath: string;
  readonly json: boolean;
  /** Decisions to record before running on (`tasks approve` / `tasks reject`). */
  readonly decisions?: readonly { approvalId: string; decision: 'approve' | 'reject'; reason?: string }[];
  readonly actor?: string;
}

/**
 * Runs one stored task in this process with a TaskRunner until it ends or pauses, streaming the guest's console
 * to stderr. SIGINT pauses the task (it stays resumable) instead of killing the process. Exit code: 0 for
 * succeeded or paused, 1 for failed or cancelled.
 */
export async function runStoredTask(options: RunStoredTaskOptions, io: CliIo): Promise<number> {
  const { store, taskId } = options;
  const driver = createQuickJsDriver({ warmVmsPerWorker: 1 });
  const runner = new TaskRunner({
    store,
    driver,
    tools: new ToolRegistry(options.tools),
    owner: `cli-${process.pid}`,
    onLog: (entry) => io.stderr(`${entry.level === 'log' ? '' : `[${entry.level}] `}${entry.message}\n`),
  });
  const onSigint = (): void => {
    io.stderr(`pausing task ${taskId} (SIGINT)\n`);
    runner.pause(taskId);
  };
  process.once('SIGINT', onSigint);
  let record: TaskRecord | null;
  try {
    await driver.ready();
    record = options.decisions
      ? await runner.decide(taskId, options.decisions, options.actor ?? 'cli')
      : await runner.runTask(taskId);
  } finally {
    process.off('SIGINT', onSigint);
    await driver.close();
  }
  if (record === null) {
    const current = await store.getTask(taskId);
    throw new CodecallError(
      'VERSION_CONFLICT',
      `task ${taskId} could not be claimed (status ${current?.status ?? 'unknown'}); another worker may hold it`,
    );
  }
  const journal = record.status === 'paused' ? await store.readJournal(taskId) : undefined;
  report(record, options, io, journal);
  return record.status === 'succeeded' || record.status === 'paused' ? 0 : 1;
}

function report(
  record: TaskRecord,
  options: RunStoredTaskOptions,
  io: CliIo,
  journal: readonly JournalEntry[] | undefined,
): void {
  if (options.json) {
    io.stdout(`${JSON.stringify(taskOutcomeJson(record, journal))}\n`);
    return;
  }
  switch (record.status) {
    case 'succeeded':
      io.stdout(`${inspect(taskResult(record), { depth: 8, colors: false })}\n`);
      io.stderr(`task ${record.id} succeeded\n`);
      break;
    case 'paused':
      for (const a of journal ? pendingApprovals(journal) : []) {
        io.stderr(`approval ${a.id}: ${a.tool}(${JSON.stringify(toJsonView(a.arguments))})\n`);
      }
      io.stderr(
        `task ${record.id} paused (${record.pauseReason ?? 'unknown'}); resume with: ` +
          `codecall tasks resume ${record.id} --db ${options.dbPath}\n`,
      );
      break;
    default:
      io.stderr(
        `task ${record.id} ${record.status}` +
          `${record.error ? `: ${record.error.code}: ${record.error.message}` : ''}\n`,
      );
  }
}
