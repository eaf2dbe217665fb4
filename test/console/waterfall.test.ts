import { describe, expect, it } from 'vitest';
import type { TaskEvent } from '../../console/src/types.ts';
import { waterfall } from '../../console/src/waterfall.ts';

// The console's waterfall from journal entries (a pure function; console-waterfall.test.ts shows it in Chromium).

const T0 = Date.UTC(2026, 11, 1, 12);
let seq = 0;
const entry = (type: string, data: Record<string, unknown>, ms: number): TaskEvent => ({
  source: 'journal',
  seq: ++seq,
  type,
  data,
  created_at: new Date(T0 + ms).toISOString(),
});
const intent = (id: string, tool: string, ms: number) =>
  entry('tool_intent', { call_id: id, tool, args: '{}' }, ms);
const outcome = (id: string, ms: number, ok = true) =>
  entry('tool_outcome', { call_id: id, ok, payload: '1' }, ms);

describe('the console waterfall', () => {
  it("places each call from its start to its end and counts a Promise.all's calls as running at once", () => {
    const chart = waterfall(
      [
        entry('control', { action: 'attempt', stalled: 0 }, 0),
        intent('call-1', 'tools.a', 10),
        intent('call-2', 'tools.b', 10),
        intent('call-3', 'tools.c', 11),
        outcome('call-2', 300),
        outcome('call-1', 310),
        outcome('call-3', 320, false),
        intent('call-4', 'tools.d', 330),
        outcome('call-4', 400),
      ],
      false,
    );
    expect(chart.calls.map((c) => [c.tool, c.start - T0, c.end - T0, c.status])).toEqual([
      ['tools.a', 10, 310, 'ok'],
      ['tools.b', 10, 300, 'ok'],
      ['tools.c', 11, 320, 'error'],
      ['tools.d', 330, 400, 'ok'],
    ]);
    expect(chart.concurrency).toBe(3);
    expect([chart.from - T0, chart.to - T0]).toEqual([10, 400]);
  });

  it("places a read, whose intent comes with its outcome, from its intent's started_at (ADR 0047, 2026-12-07)", () => {
    const chart = waterfall(
      [
        entry('control', { action: 'attempt', stalled: 0 }, 0),
        entry('tool_intent', { call_id: 'call-1', tool: 'tools.look', args: '{}', started_at: T0 + 20 }, 250),
        outcome('call-1', 250),
      ],
      false,
    );
    expect(chart.calls.map((c) => [c.tool, c.start - T0, c.end - T0, c.status])).toEqual([
      ['tools.look', 20, 250, 'ok'],
    ]);
  });

  it('marks a call waiting for approval, then runs it from its start, and the earlier run as replayed', () => {
    const before = [
      entry('control', { action: 'attempt', stalled: 0 }, 0),
      intent('call-1', 'tools.a', 10),
      outcome('call-1', 20),
      intent('call-2', 'tools.pay', 30),
      entry(
        'approval_request',
        { approval_id: 'ap-1', call_id: 'call-2', tool: 'tools.pay', args: '{}' },
        30,
      ),
      entry('control', { action: 'await_approval' }, 31),
    ];
    const paused = waterfall(before, false);
    expect(paused.calls.map((c) => c.status)).toEqual(['ok', 'waiting-approval']);
    // A call without an outcome ends at the newest entry, not at the reader's clock.
    expect(paused.calls[1]?.end).toBe(T0 + 31);
    expect(paused.calls[1]?.ended).toBe(false);

    const after = waterfall(
      [
        ...before,
        entry('approval_decision', { approval_id: 'ap-1', decision: 'approve', actor: 'ops' }, 5000),
        entry('control', { action: 'attempt', stalled: 0 }, 5001),
        entry('control', { action: 'approved_call_started', call_id: 'call-2' }, 5002),
        outcome('call-2', 5010),
      ],
      false,
    );
    expect(after.calls.map((c) => [c.status, c.askedAt - T0, c.start - T0, c.end - T0])).toEqual([
      ['replayed', 10, 10, 20],
      ['ok', 30, 5002, 5010],
    ]);
  });

  it('says a call without an outcome runs while the task runs, and is unfinished once it stopped', () => {
    const events = [intent('call-1', 'tools.slow', 0), entry('clock', { clock: 1 }, 50)];
    expect(waterfall(events, true).calls[0]?.status).toBe('running');
    expect(waterfall(events, false).calls[0]?.status).toBe('unfinished');
    expect(waterfall([], true).calls).toEqual([]);
  });
});
