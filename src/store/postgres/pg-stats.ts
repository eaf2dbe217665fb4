import type { StatsQuery, StoreStats } from '../../spec/index.ts';
import {
  activeCounts,
  foldChanged,
  foldToolCalls,
  STATS_JOURNAL_TYPES,
  STATS_MAX_TASKS,
} from '../stats-rows.ts';
import type { ActiveRow, ChangedRow, StatsJournalRow } from '../stats-rows.ts';
import { all } from './pg-sql.ts';
import type { Sql } from './pg-sql.ts';

/**
 * TaskStore.readStats over every node's tasks: the same three reads as SQLite's (sqlite-stats.ts) on the same
 * indexes (tasks_fair / tasks_by_tenant_status, tasks_by_status_change / tasks_by_tenant_status_change, the
 * journal's key), the journals of the chosen tasks in one statement.
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
  const changed = await all<ChangedRow>(
    sql,
    `SELECT id, tenant, status, CASE WHEN status = 'failed' THEN error END AS error, created_at, updated_at,
       journal_bytes
     FROM tasks${tenant === undefined ? '' : ' WHERE tenant = $2'} ORDER BY status_seq DESC LIMIT $1`,
    [STATS_MAX_TASKS, ...args],
  );
  const { ended, journals, capped } = foldChanged(changed, since);
  const rows =
    journals.length === 0
      ? []
      : await all<StatsJournalRow>(
          sql,
          `SELECT task_id, seq, type, created_at, data FROM journal
           WHERE task_id = ANY($1::text[]) AND type = ANY($2::text[]) ORDER BY task_id, seq`,
          [journals, STATS_JOURNAL_TYPES],
        );
  return { active: activeCounts(counts), ended, toolCalls: foldToolCalls(rows, since), capped };
}
