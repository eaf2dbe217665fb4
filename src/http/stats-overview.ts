import type { EndedTask, StoreStats, ToolCallSample } from '../spec/index.ts';

// GET /api/v1/stats/overview's answer, folded from what the store read (TaskStore.readStats, ADR 0054). Pure:
// the route gives it the store's rows and the clock.

/** The chart's bars: the window in this many equal buckets. */
export const THROUGHPUT_BUCKETS = 60;
/** Rows of the per-tenant and per-tool tables, at most (the rest are counted in `more`). */
export const MAX_TABLE_ROWS = 50;

export interface Quantiles {
  readonly count: number;
  /** Milliseconds; null when there is nothing to measure. */
  readonly p50: number | null;
  readonly p99: number | null;
}

export interface StatsOverview {
  readonly generated_at: string;
  readonly window_seconds: number;
  /** The tenant the numbers cover; null: every tenant (an admin key's view). */
  readonly tenant: string | null;
  readonly throughput: {
    readonly bucket_seconds: number;
    /** Ended tasks per minute over the window. */
    readonly per_minute: number;
    readonly buckets: readonly {
      readonly start: string;
      readonly succeeded: number;
      readonly failed: number;
      readonly cancelled: number;
    }[];
  };
  readonly totals: {
    readonly pending: number;
    readonly running: number;
    readonly paused: number;
    readonly succeeded: number;
    readonly failed: number;
    readonly cancelled: number;
  };
  readonly tenants: readonly {
    readonly tenant: string;
    readonly pending: number;
    readonly running: number;
    readonly paused: number;
  }[];
  readonly more_tenants: number;
  readonly pause_reasons: readonly { readonly reason: string; readonly count: number }[];
  readonly error_codes: readonly { readonly code: string; readonly count: number }[];
  /** From creation to end, of the tasks that ended in the window. */
  readonly task_latency_ms: Quantiles;
  readonly tool_latency_ms: Quantiles & { readonly failed: number };
  readonly tools: readonly (Quantiles & { readonly tool: string; readonly failed: number })[];
  /** A bound of the store's read was reached: the window's numbers are of its newest part. */
  readonly capped: { readonly tasks: boolean; readonly tool_calls: boolean };
}

/** Nearest-rank quantiles of `values` (sorted here). */
export function quantiles(values: readonly number[]): Quantiles {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number): number | null =>
    sorted.length === 0 ? null : (sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)] ?? null);
  return { count: sorted.length, p50: at(0.5), p99: at(0.99) };
}

const byCount = <T extends { count: number }>(a: T, b: T): number => b.count - a.count;

function counted(keys: Iterable<string>): { key: string; count: number }[] {
  const m = new Map<string, number>();
  for (const k of keys) m.set(k, (m.get(k) ?? 0) + 1);
  return [...m].map(([key, count]) => ({ key, count })).sort(byCount);
}

function buckets(ended: readonly EndedTask[], since: number, windowMs: number): StatsOverview['throughput'] {
  const width = windowMs / THROUGHPUT_BUCKETS;
  const out = Array.from({ length: THROUGHPUT_BUCKETS }, (_, i) => ({
    start: new Date(Math.round(since + i * width)).toISOString(),
    succeeded: 0,
    failed: 0,
    cancelled: 0,
  }));
  for (const t of ended) {
    const i = Math.min(THROUGHPUT_BUCKETS - 1, Math.floor((t.endedAt - since) / width));
    const b = out[i];
    if (b !== undefined) b[t.status]++;
  }
  return {
    bucket_seconds: width / 1000,
    per_minute: Math.round((ended.length / (windowMs / 60_000)) * 100) / 100,
    buckets: out,
  };
}

function toolTable(calls: readonly ToolCallSample[]): StatsOverview['tools'] {
  const by = new Map<string, ToolCallSample[]>();
  for (const c of calls) {
    const list = by.get(c.tool);
    if (list === undefined) by.set(c.tool, [c]);
    else list.push(c); // not a copy per call: a journal budget holds tens of thousands of calls
  }
  return [...by]
    .map(([tool, cs]) => ({
      tool,
      ...quantiles(cs.map((c) => c.ms)),
      failed: cs.filter((c) => !c.ok).length,
    }))
    .sort(byCount)
    .slice(0, MAX_TABLE_ROWS);
}

export function statsOverview(
  stats: StoreStats,
  options: { readonly now: number; readonly windowSeconds: number; readonly tenant: string | null },
): StatsOverview {
  const windowMs = options.windowSeconds * 1000;
  const since = options.now - windowMs;
  const ended = stats.ended.filter((t) => t.endedAt >= since && t.endedAt <= options.now);
  const tenants = new Map<string, { tenant: string; pending: number; running: number; paused: number }>();
  const reasons = new Map<string, number>();
  const totals = { pending: 0, running: 0, paused: 0, succeeded: 0, failed: 0, cancelled: 0 };
  for (const a of stats.active) {
    const row = tenants.get(a.tenant) ?? { tenant: a.tenant, pending: 0, running: 0, paused: 0 };
    row[a.status] += a.count;
    totals[a.status] += a.count;
    tenants.set(a.tenant, row);
    if (a.status === 'paused') {
      const reason = a.pauseReason ?? 'unknown';
      reasons.set(reason, (reasons.get(reason) ?? 0) + a.count);
    }
  }
  for (const t of ended) totals[t.status]++;
  const tenantRows = [...tenants.values()].sort(
    (a, b) => b.pending + b.running + b.paused - (a.pending + a.running + a.paused),
  );
  const calls = stats.toolCalls.filter((c) => c.at >= since);
  return {
    generated_at: new Date(options.now).toISOString(),
    window_seconds: options.windowSeconds,
    tenant: options.tenant,
    throughput: buckets(ended, since, windowMs),
    totals,
    tenants: tenantRows.slice(0, MAX_TABLE_ROWS),
    more_tenants: Math.max(0, tenantRows.length - MAX_TABLE_ROWS),
    pause_reasons: [...reasons].map(([reason, count]) => ({ reason, count })).sort(byCount),
    error_codes: counted(ended.filter((t) => t.status === 'failed').map((t) => t.errorCode ?? 'UNKNOWN')).map(
      ({ key, count }) => ({ code: key, count }),
    ),
    task_latency_ms: quantiles(ended.map((t) => t.endedAt - t.createdAt)),
    tool_latency_ms: { ...quantiles(calls.map((c) => c.ms)), failed: calls.filter((c) => !c.ok).length },
    tools: toolTable(calls),
    capped: { tasks: stats.capped.ended, tool_calls: stats.capped.toolCalls },
  };
}
