import { describe, expect, it } from 'vitest';
import type { JournalEntry } from '../spec/index.ts';
import { ToolCallTimer } from './tool-call-timer.ts';

const entry = (type: string, data: Record<string, unknown>): JournalEntry =>
  ({ taskId: 't', seq: 1, type, data, checksum: '', createdAt: '' }) as unknown as JournalEntry;

describe('ToolCallTimer', () => {
  it("times a read whose intent comes with its outcome from the intent's started_at (ADR 0047, 2026-12-07)", () => {
    const seen: [string, boolean, number][] = [];
    let now = 1000;
    const timer = new ToolCallTimer(
      (tool, ok, s) => seen.push([tool, ok, s]),
      () => now,
    );
    timer.onEntries('t', [
      entry('tool_intent', {
        call_id: 'call-1',
        tool: 'tools.look',
        args: '{}',
        started_at: Date.now() - 500,
      }),
      entry('tool_outcome', { call_id: 'call-1', ok: true, payload: '1' }),
    ]);
    expect(seen).toHaveLength(1);
    expect(seen[0]?.[1]).toBe(true);
    expect(seen[0]?.[2]).toBeGreaterThanOrEqual(0.5);
    expect(seen[0]?.[2]).toBeLessThan(5);
    // An intent without it (any other effect) starts the clock when it is journaled.
    timer.onEntries('t', [entry('tool_intent', { call_id: 'call-2', tool: 'tools.pay', args: '{}' })]);
    now += 250;
    timer.onEntries('t', [entry('tool_outcome', { call_id: 'call-2', ok: false, payload: '{}' })]);
    expect(seen[1]).toEqual(['tools.pay', false, 0.25]);
  });
});
