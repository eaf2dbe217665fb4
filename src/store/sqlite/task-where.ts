import type { TaskCountFilter } from '../../spec/index.ts';

/** The WHERE clauses of a task list or count: equality on status, tenant, session and batch. */
export function taskWhere(filter: TaskCountFilter): { where: string[]; params: (string | number)[] } {
  const where: string[] = [];
  const params: (string | number)[] = [];
  for (const [column, value] of [
    ['status', filter.status],
    ['tenant', filter.tenant],
    ['session_id', filter.sessionId],
    ['batch_id', filter.batchId],
  ] as const) {
    if (value !== undefined) {
      where.push(`${column} = ?`);
      params.push(value);
    }
  }
  return { where, params };
}
