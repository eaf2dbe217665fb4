import type { ActiveCount, EndedTask, PauseReason, StoreStats, ToolCallSample } from '../spec/index.ts';

// TaskStore.readStats (ADR 0054) as both stores read it: the rows their SQL gives, folded the same way here. The
// bounds keep one read's cost fixed however big the database: the tasks that ended in the window, newest first
// (tasks_by_end / tasks_by_tenant_end), and the running ones, then the journals of those tasks until a byte budget
// is spent.

/** Ended tasks read, newest end first, at most. */
export const STATS_MAX_TASKS = 5000;
/** Running tasks whose journals are read too (bounded anyway by the run slots of every node). */
export const STATS_MAX_RUNNING = 200;
/** The condition of the partial indexes below: a query must say it in these words for SQLite to use them. */
export const ENDED = "status IN ('succeeded', 'failed', 'cancelled')";
const ENDED_INDEXES = `
CREATE INDEX tasks_by_end ON tasks (updated_at) WHERE ${ENDED};
CREATE INDEX tasks_by_tenant_end ON tasks (tenant, updated_at) WHERE ${ENDED};
`;
/** SQLite migration 21 and PostgreSQL schema step 6: ended tasks by end time (ADR 0054). */
export const SQLITE_ENDED_STEP = ENDED_INDEXES;
export const PG_ENDED_STEP = ENDED_INDEXES;
/** Tasks whose journals are read for tool calls, at most. */
export const STATS_MAX_JOURNALS = 500;
/** Journal bytes (`journal_bytes`, kept with each append) read for tool calls, at most. */
export const STATS_JOURNAL_BYTES = 16 * 1024 * 1024;
/** The journal entry types read for tool calls: their start, end, and the waits for a human that are not timed. */
export const STATS_JOURNAL_TYPES = ['tool_intent', 'tool_outcome', 'approval_request', 'input_request'];

export interface ActiveRow {
  readonly tenant: string;
  readonly status: string;
  readonly pause_reason: string | null;
  readonly n: number;
}

/** An ended (newest end first) or running task; `error` only of failed tasks. */
export interface ChangedRow {
  readonly id: string;
  readonly tenant: string;
  readonly status: string;
  readonly error: string | null;
  readonly created_at: number;
  readonly updated_at: number;
  readonly journal_bytes: number;
}

export interface StatsJournalRow {
  readonly task_id: string;
  readonly seq: number;
  readonly type: string;
  readonly created_at: number;
  readonly data: string;
}

const ACTIVE = new Set(['pending', 'running', 'paused']);
const ENDED_STATUSES = new Set(['succeeded', 'failed', 'cancelled']);

export function activeCounts(rows: readonly ActiveRow[]): ActiveCount[] {
  return rows
    .filter((r) => ACTIVE.has(r.status))
    .map((r) => ({
      tenant: r.tenant,
      status: r.status as ActiveCount['status'],
      pauseReason: r.status === 'paused' ? ((r.pause_reason as PauseReason | null) ?? null) : null,
      count: Number(r.n),
    }));
}

function errorCode(error: string | null): string | null {
  if (error === null) return null;
  try {
    const code = (JSON.parse(error) as { code?: unknown }).code;
    return typeof code === 'string' ? code : null;
  } catch {
    return null; // a garbled row: counted as ended, without a code
  }
}

/**
 * The tasks that ended in the window (`ended`: newest first, at most STATS_MAX_TASKS, all at or after `since`), and
 * which tasks' journals to read: the running ones, then the ended ones, within the bounds.
 */
export function foldChanged(
  ended: readonly ChangedRow[],
  running: readonly ChangedRow[],
): { ended: EndedTask[]; journals: string[]; capped: StoreStats['capped'] } {
  const out: EndedTask[] = ended
    .filter((r) => ENDED_STATUSES.has(r.status))
    .map((r) => ({
      tenant: r.tenant,
      status: r.status as EndedTask['status'],
      errorCode: r.status === 'failed' ? errorCode(r.error) : null,
      createdAt: Number(r.created_at),
      endedAt: Number(r.updated_at),
    }));
  const journals: string[] = [];
  let bytes = 0;
  let skipped = false;
  for (const r of [...running, ...ended]) {
    const size = Number(r.journal_bytes);
    if (journals.length < STATS_MAX_JOURNALS && bytes + size <= STATS_JOURNAL_BYTES) {
      journals.push(r.id);
      bytes += size;
    } else {
      skipped = true;
    }
  }
  const cappedEnded = ended.length >= STATS_MAX_TASKS;
  return { ended: out, journals, capped: { ended: cappedEnded, toolCalls: cappedEnded || skipped } };
}

function parsed(data: string): Record<string, unknown> | null {
  try {
    const v = JSON.parse(data) as unknown;
    return typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/**
 * The tool calls of the journals read that ran live and completed at or after `since`: from the intent to the
 * outcome of one call id. Not timed: calls taken over from an earlier task or refused by a budget (no tool ran),
 * and calls that waited for an approval or input (the wait was a human's, not the tool's).
 */
export function foldToolCalls(rows: readonly StatsJournalRow[], since: number): ToolCallSample[] {
  const out: ToolCallSample[] = [];
  const started = new Map<string, { tool: string; at: number }>();
  const waited = new Set<string>();
  for (const r of rows) {
    const d = parsed(r.data);
    const call = typeof d?.call_id === 'string' ? `${r.task_id}\u0000${d.call_id}` : null;
    if (d === null || call === null) continue;
    if (r.type === 'tool_intent') {
      if (d.carried_from === undefined && d.over_budget === undefined && typeof d.tool === 'string') {
        // A read's intent, journaled with its outcome, says when its tool started (ADR 0047, amended 2026-12-07).
        const at = typeof d.started_at === 'number' ? d.started_at : Number(r.created_at);
        started.set(call, { tool: d.tool, at });
      }
    } else if (r.type === 'approval_request' || r.type === 'input_request') {
      waited.add(call);
      // A tool's own request for input mid-call (`<call>~<n>`) names the call it belongs to.
      if (typeof d.for_call === 'string') waited.add(`${r.task_id}\u0000${d.for_call}`);
    } else if (r.type === 'tool_outcome') {
      const start = started.get(call);
      started.delete(call);
      const at = Number(r.created_at);
      if (start === undefined || waited.has(call) || at < since) continue;
      out.push({ tool: start.tool, ms: Math.max(0, at - start.at), ok: d.ok === true, at });
    }
  }
  return out;
}
