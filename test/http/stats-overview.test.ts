import { describe, expect, it } from 'vitest';
import { quantiles, statsOverview } from '../../src/http/stats-overview.ts';
import type { StoreStats } from '../../src/spec/index.ts';
import {
  foldChanged,
  foldToolCalls,
  STATS_JOURNAL_BYTES,
  STATS_MAX_TASKS,
} from '../../src/store/stats-rows.ts';

// The overview's folds, apart from the stores: quantiles, buckets at the window's edges, the bounds of the read,
// and which tool calls are timed.

const NOW = Date.UTC(2026, 0, 1, 12);
const HOUR = 3_600_000;

describe('stats overview', () => {
  it('takes nearest-rank quantiles', () => {
    expect(quantiles([])).toEqual({ count: 0, p50: null, p99: null });
    expect(quantiles([7])).toEqual({ count: 1, p50: 7, p99: 7 });
    const hundred = Array.from({ length: 100 }, (_, i) => 100 - i);
    expect(quantiles(hundred)).toEqual({ count: 100, p50: 50, p99: 99 });
    expect(quantiles([1, 1000])).toEqual({ count: 2, p50: 1, p99: 1000 });
  });

  it('puts ended tasks in 60 buckets, the window start in the first and now in the last', () => {
    const ended = (endedAt: number, status: 'succeeded' | 'failed' = 'succeeded') => ({
      tenant: 't',
      status,
      errorCode: status === 'failed' ? 'BOOM' : null,
      createdAt: endedAt - 100,
      endedAt,
    });
    const stats: StoreStats = {
      active: [
        { tenant: 'a', status: 'pending', pauseReason: null, count: 3 },
        { tenant: 'b', status: 'paused', pauseReason: 'approval_required', count: 2 },
        { tenant: 'a', status: 'paused', pauseReason: 'approval_required', count: 1 },
      ],
      ended: [ended(NOW), ended(NOW - HOUR), ended(NOW - HOUR - 1), ended(NOW - 30 * 60_000, 'failed')],
      toolCalls: [
        { tool: 'x', ms: 10, ok: true, at: NOW - 1 },
        { tool: 'x', ms: 30, ok: false, at: NOW - 2 },
        { tool: 'y', ms: 5, ok: true, at: NOW - 2 * HOUR },
      ],
      capped: { ended: false, toolCalls: true },
    };
    const o = statsOverview(stats, { now: NOW, windowSeconds: 3600, tenant: null });
    const counts = o.throughput.buckets.map((b) => b.succeeded + b.failed);
    expect(counts[0]).toBe(1);
    expect(counts[59]).toBe(1);
    expect(counts[30]).toBe(1);
    expect(counts.reduce((a, b) => a + b)).toBe(3);
    expect(o.throughput.per_minute).toBe(0.05);
    expect(o.totals).toEqual({ pending: 3, running: 0, paused: 3, succeeded: 2, failed: 1, cancelled: 0 });
    expect(o.tenants).toEqual([
      { tenant: 'a', pending: 3, running: 0, paused: 1 },
      { tenant: 'b', pending: 0, running: 0, paused: 2 },
    ]);
    expect(o.pause_reasons).toEqual([{ reason: 'approval_required', count: 3 }]);
    expect(o.error_codes).toEqual([{ code: 'BOOM', count: 1 }]);
    expect(o.task_latency_ms).toEqual({ count: 3, p50: 100, p99: 100 });
    expect(o.tool_latency_ms).toEqual({ count: 2, p50: 10, p99: 30, failed: 1 });
    expect(o.tools).toEqual([{ tool: 'x', count: 2, p50: 10, p99: 30, failed: 1 }]);
    expect(o.capped).toEqual({ tasks: false, tool_calls: true });
  });

  it('reads journals up to its byte budget and says when the walk or the budget cut it short', () => {
    const row = (i: number, bytes: number, at = NOW) => ({
      id: `t${i}`,
      tenant: 't',
      status: 'succeeded',
      error: null,
      created_at: at - 10,
      updated_at: at,
      journal_bytes: bytes,
    });
    const half = STATS_JOURNAL_BYTES / 2;
    const running = { ...row(9, 1), status: 'running' };
    const cut = foldChanged([row(1, half), row(2, half), row(3, 1)], [running]);
    // The running task's journal first, then the ended ones newest first, each that still fits the budget.
    expect(cut.journals).toEqual(['t9', 't1', 't3']);
    expect(cut.ended.map((t) => t.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
    expect(cut.capped).toEqual({ ended: false, toolCalls: true });
    // As many ended tasks as the read takes: there may be more.
    const full = Array.from({ length: STATS_MAX_TASKS }, (_, i) => row(i, 0));
    expect(foldChanged(full, []).capped).toEqual({ ended: true, toolCalls: true });
    // A garbled error is an ended task without a code.
    const garbled = foldChanged([{ ...row(1, 0), status: 'failed', error: '{not json' }], []);
    expect(garbled.ended[0]?.errorCode).toBeNull();
  });

  it('times a call from intent to outcome, not one that waited for a human, mid-call input included', () => {
    const e = (task: string, seq: number, type: string, at: number, data: object) => ({
      task_id: task,
      seq,
      type,
      created_at: at,
      data: JSON.stringify(data),
    });
    const calls = foldToolCalls(
      [
        e('a', 1, 'tool_intent', 100, { call_id: 'call-1', tool: 't' }),
        e('a', 2, 'input_request', 110, { call_id: 'call-1~1', for_call: 'call-1' }),
        e('a', 3, 'tool_outcome', 500, { call_id: 'call-1', ok: true }),
        e('a', 4, 'tool_intent', 600, { call_id: 'call-2', tool: 't' }),
        e('a', 5, 'tool_outcome', 650, { call_id: 'call-2', ok: true }),
        // The same call id in another task is another call; an outcome without its intent is not timed.
        e('b', 1, 'tool_intent', 100, { call_id: 'call-1', tool: 'u' }),
        e('b', 2, 'tool_outcome', 120, { call_id: 'call-1', ok: false }),
        e('b', 3, 'tool_outcome', 130, { call_id: 'call-9', ok: true }),
        e('b', 4, 'tool_intent', 140, 'garbled' as unknown as object),
      ],
      0,
    );
    expect(calls).toEqual([
      { tool: 't', ms: 50, ok: true, at: 650 },
      { tool: 'u', ms: 20, ok: false, at: 120 },
    ]);
  });
});
