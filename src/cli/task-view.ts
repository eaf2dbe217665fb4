import { inspect } from 'node:util';
import { decodeValue } from '../codec/index.ts';
import { pendingApprovals } from '../durable/index.ts';
import type { JournalEntry, TaskRecord } from '../spec/index.ts';
import { toJsonView } from '../codec/index.ts';

/** The decoded result of a succeeded task (undefined otherwise). */
export function taskResult(record: TaskRecord): unknown {
  return record.result === null ? undefined : decodeValue(record.result);
}

/** The JSON object `exec --db` and `tasks resume` print as their last stdout line. */
export function taskOutcomeJson(
  record: TaskRecord,
  journal?: readonly JournalEntry[],
): Record<string, unknown> {
  return {
    task_id: record.id,
    status: record.status,
    pause_reason: record.pauseReason,
    pending_approvals: journal
      ? pendingApprovals(journal).map((a) => ({ id: a.id, tool: a.tool, arguments: toJsonView(a.arguments) }))
      : [],
    result: record.result === null ? null : toJsonView(taskResult(record)),
    error: record.error === null ? null : { code: record.error.code, message: record.error.message },
  };
}

/** `tasks show`/`tasks list --json`: the outcome plus bookkeeping, and the journal summary when given. */
export function taskDetailJson(
  record: TaskRecord,
  journal?: readonly JournalEntry[],
): Record<string, unknown> {
  return {
    ...taskOutcomeJson(record, journal),
    language: record.input.language,
    seed: record.input.seed,
    attempts: record.attempts,
    version: record.version,
    created_at: record.createdAt,
    updated_at: record.updatedAt,
    ...(journal ? { journal_entries: journal.length, last_checkpoint_seq: journal.at(-1)?.seq ?? null } : {}),
  };
}

/** One line per task for `tasks list`. */
export function taskLine(record: TaskRecord): string {
  const reason = record.pauseReason === null ? '' : ` (${record.pauseReason})`;
  return `${record.id}  ${record.status}${reason}  ${record.createdAt}`;
}

/** Human-readable `tasks show`. */
export function taskDetailText(record: TaskRecord, journal: readonly JournalEntry[]): string {
  const lines = [
    `id:          ${record.id}`,
    `status:      ${record.status}${record.pauseReason === null ? '' : ` (${record.pauseReason})`}`,
    `language:    ${record.input.language}`,
    `seed:        ${record.input.seed}`,
    `attempts:    ${record.attempts}`,
    `version:     ${record.version}`,
    `created:     ${record.createdAt}`,
    `updated:     ${record.updatedAt}`,
    `journal:     ${journal.length} entries, last seq ${journal.at(-1)?.seq ?? '-'}`,
  ];
  if (record.error !== null) lines.push(`error:       ${record.error.code}: ${record.error.message}`);
  if (record.result !== null)
    lines.push(`result:      ${inspect(taskResult(record), { depth: 8, colors: false })}`);
  return `${lines.join('\n')}\n`;
}
