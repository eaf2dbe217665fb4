import type Database from 'better-sqlite3';
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
import { prepared } from './statement-cache.ts';

const TYPES = STATS_JOURNAL_TYPES.map((t) => `'${t}'`).join(', ');

/**
 * TaskStore.readStats in one read transaction (one snapshot). The counts search tasks_fair (or, for one tenant,
 * tasks_by_tenant_status) and read rows only for paused tasks' reasons; the ended tasks come newest end first from
 * tasks_by_end (tasks_by_tenant_end, migration 21), never the `input` column; journals are read by their key,
 * `data` only of the four entry types that time a call.
 */
export function readStatsRows(db: Database.Database, query: StatsQuery): StoreStats {
  const { since, tenant } = query;
  return db.transaction((): StoreStats => {
    const byTenant = tenant === undefined ? '' : ' AND tenant = ?';
    const args = tenant === undefined ? [] : [tenant];
    const counts = prepared(
      db,
      `SELECT tenant, status, NULL AS pause_reason, count(*) AS n FROM tasks
       WHERE status IN ('pending', 'running')${byTenant} GROUP BY tenant, status
       UNION ALL
       SELECT tenant, status, pause_reason, count(*) AS n FROM tasks
       WHERE status = 'paused'${byTenant} GROUP BY tenant, pause_reason`,
    ).all(...args, ...args) as ActiveRow[];
    const columns = `id, tenant, status, CASE WHEN status = 'failed' THEN error END AS error, created_at,
       updated_at, journal_bytes`;
    const ended = prepared(
      db,
      // Named: without ANALYZE's statistics the planner would take tasks_by_status_created and sort every ended task.
      `SELECT ${columns} FROM tasks INDEXED BY ${tenant === undefined ? 'tasks_by_end' : 'tasks_by_tenant_end'}
       WHERE ${ENDED}${byTenant} AND updated_at >= ?
       ORDER BY updated_at DESC LIMIT ?`,
    ).all(...args, since, STATS_MAX_TASKS) as ChangedRow[];
    const running = prepared(
      db,
      `SELECT ${columns} FROM tasks WHERE status = 'running'${byTenant} LIMIT ?`,
    ).all(...args, STATS_MAX_RUNNING) as ChangedRow[];
    const { ended: endedTasks, journals, capped } = foldChanged(ended, running);
    const read = prepared(
      db,
      `SELECT task_id, seq, type, created_at, data FROM journal
       WHERE task_id = ? AND type IN (${TYPES}) ORDER BY seq`,
    );
    const rows: StatsJournalRow[] = [];
    // Row by row, not spread: one task's journal may hold more entries than a call's arguments may.
    for (const id of journals)
      for (const row of read.iterate(id) as Iterable<StatsJournalRow>) rows.push(row);
    return { active: activeCounts(counts), ended: endedTasks, toolCalls: foldToolCalls(rows, since), capped };
  })();
}
