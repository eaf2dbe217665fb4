import type { StatsQuery, StoreStats } from '../../spec/index.ts';
import {
  activeCounts,
  foldChanged,
  foldToolCalls,
  ENDED,
  STATS_JOURNAL_TYPES,
  STATS_MAX_RUNNING,
  STATS_MAX_TASKS,
} from '../stats-rows.ts';
import type { ActiveRow, ChangedRow, StatsJournalRow } from '../stats-rows.ts';
import { all } from './pg-sql.ts';
import type { Sql } from './pg-sql.ts';

/**
 * TaskStore.readStats over every node's tasks: the same reads as SQLite's (sqlite-stats.ts) on the same
 * indexes (tasks_fair / tasks_by_tenant_status, tasks_by_end / tasks_by_tenant_end of step 6, the journal's key), the journals of the chosen tasks in one statement.
 */
export async function readStatsRows(sql: Sql, query: StatsQuery): Promise<StoreStats> {
  const { since, tenant } = query;
  const byTenant = tenant === undefined ? '' : ' AND tenant = $1';
  const args = tenant === undefined ? [] : [tenant];
  const counts = await all<ActiveRow>(
    sql,
    `SELECT tenant, status, NULL::text AS pause_reason, count(*) AS n FROM tasks
     WHERE status IN ('pending', 'running')${byTenant} GROUP BY tenant, status
     UNION ALL
     SELECT tenant, 'paused', pause_reason, count(*) AS n FROM tasks
     WHERE status = 'paused'${byTenant} GROUP BY tenant, pause_reason`,
    args,
  );
  // The journal's size lives beside the change stamp since schema step 5 (ADR 0050): read per row returned only.
  const columns = `id, tenant, status, CASE WHEN status = 'failed' THEN error END AS error, created_at,
     updated_at, (SELECT c.journal_bytes FROM task_changes AS c WHERE c.task_id = tasks.id) AS journal_bytes`;
  const n = args.length;
  const ended = await all<ChangedRow>(
    sql,
    `SELECT ${columns} FROM tasks WHERE ${ENDED}${byTenant} AND updated_at >= $${n + 1}
     ORDER BY updated_at DESC LIMIT $${n + 2}`,
    [...args, since, STATS_MAX_TASKS],
  );
  const running = await all<ChangedRow>(
    sql,
    `SELECT ${columns} FROM tasks WHERE status = 'running'${byTenant} LIMIT $${n + 1}`,
    [...args, STATS_MAX_RUNNING],
  );
  const { ended: endedTasks, journals, capped } = foldChanged(ended, running);
  const rows =
    journals.length === 0
      ? []
      : await all<StatsJournalRow>(
          sql,
          `SELECT task_id, seq, type, created_at, data FROM journal
           WHERE task_id = ANY($1::text[]) AND type = ANY($2::text[]) ORDER BY task_id, seq`,
          [journals, STATS_JOURNAL_TYPES],
        );
  return { active: activeCounts(counts), ended: endedTasks, toolCalls: foldToolCalls(rows, since), capped };
}
