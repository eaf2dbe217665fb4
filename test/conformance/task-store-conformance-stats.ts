import { describe, expect, it } from 'vitest';
import type { JournalEntryInput, TaskStore } from '../../src/index.ts';
import { codeInput, LEASE, T0 } from './task-store-support.ts';

const N = T0 + 10 * 3_600_000;
const SINCE = N - 3_600_000;

const intent = (call: string, extra: object = {}): JournalEntryInput => ({
  type: 'tool_intent',
  data: { call_id: call, tool: 'tools.wait', args: '{}', ...extra },
});
const outcome = (call: string, ok = true): JournalEntryInput => ({
  type: 'tool_outcome',
  data: { call_id: call, ok, payload: '1' },
});

/**
 * readStats (ADR 0054): the operator's view of a store, counted by tenant, status and pause reason; what ended in
 * the window with its error codes and latency; the tool calls that ran live, timed from intent to outcome. Skipped
 * by stores without it.
 */
export function registerStatsCases(store: () => TaskStore): void {
  describe('stats', () => {
    async function running(s: TaskStore, tenant: string, now: number) {
      const task = await s.createTask(codeInput(), { now, attributes: { tenant } });
      const lease = await s.claimTask('w1', { leaseMs: LEASE, now, taskId: task.id });
      expect(lease?.taskId).toBe(task.id);
      return { id: task.id, token: lease?.fencingToken ?? -1 };
    }
    const append = (s: TaskStore, id: string, token: number, now: number, ...entries: JournalEntryInput[]) =>
      s.appendJournal(id, entries, { fencingToken: token, now });

    it('counts unended tasks, the ended ones of the window with their codes, and times live tool calls', async (ctx) => {
      const s = store();
      if (!s.readStats) return ctx.skip();
      expect(await s.readStats({ since: SINCE })).toEqual({
        active: [],
        ended: [],
        toolCalls: [],
        capped: { ended: false, toolCalls: false },
      });
      // Ended before the window: not counted, its calls not timed.
      const old = await running(s, 'st-a', N - 7_200_000);
      await append(s, old.id, old.token, N - 7_200_000, intent('call-1'));
      await append(s, old.id, old.token, N - 7_199_000, outcome('call-1'));
      await s.updateTask(
        old.id,
        { status: 'succeeded', result: '1' },
        { fencingToken: old.token, now: N - 7_199_000 },
      );

      await s.createTask(codeInput(), { now: N, attributes: { tenant: 'st-a' } });
      await s.createTask(codeInput(), { now: N, attributes: { tenant: 'st-b' } });
      await s.createTask(codeInput(), { now: N, attributes: { tenant: 'st-b' } });
      // Succeeded in the window: one call timed (25 ms); one that waited for approval, one refused by a budget and
      // one taken over from an earlier task are not.
      const ok = await running(s, 'st-a', N - 1000);
      await append(s, ok.id, ok.token, N - 900, intent('call-1'));
      await append(s, ok.id, ok.token, N - 875, outcome('call-1'));
      await append(s, ok.id, ok.token, N - 800, intent('call-2'), {
        type: 'approval_request',
        data: { approval_id: 'ap-1', call_id: 'call-2', tool: 'tools.wait', args: '{}' },
      });
      await append(s, ok.id, ok.token, N - 100, outcome('call-2'));
      await append(
        s,
        ok.id,
        ok.token,
        N - 90,
        intent('call-3', { over_budget: 'max_calls' }),
        outcome('call-3', false),
      );
      await append(s, ok.id, ok.token, N - 80, intent('call-4'));
      await append(s, ok.id, ok.token, N - 40, outcome('call-4', false));
      await s.updateTask(
        ok.id,
        { status: 'succeeded', result: '1' },
        { fencingToken: ok.token, now: N - 10 },
      );
      // Failed in the window, with its code.
      const bad = await running(s, 'st-b', N - 500);
      await s.updateTask(
        bad.id,
        { status: 'failed', error: { code: 'TOOL_FAILED', message: 'no' } },
        { fencingToken: bad.token, now: N - 5 },
      );
      // Paused for an approval; one running.
      const paused = await running(s, 'st-a', N - 300);
      await s.updateTask(
        paused.id,
        { status: 'paused', pauseReason: 'approval_required' },
        { fencingToken: paused.token, now: N - 3 },
      );
      await running(s, 'st-b', N - 2);

      const all = await s.readStats({ since: SINCE });
      const sortActive = <T extends { tenant: string; status: string }>(a: readonly T[]): T[] =>
        [...a].sort((x, y) => `${x.tenant}${x.status}`.localeCompare(`${y.tenant}${y.status}`));
      expect(sortActive(all.active)).toEqual([
        { tenant: 'st-a', status: 'paused', pauseReason: 'approval_required', count: 1 },
        { tenant: 'st-a', status: 'pending', pauseReason: null, count: 1 },
        { tenant: 'st-b', status: 'pending', pauseReason: null, count: 2 },
        { tenant: 'st-b', status: 'running', pauseReason: null, count: 1 },
      ]);
      // Newest first.
      expect(all.ended).toEqual([
        { tenant: 'st-b', status: 'failed', errorCode: 'TOOL_FAILED', createdAt: N - 500, endedAt: N - 5 },
        { tenant: 'st-a', status: 'succeeded', errorCode: null, createdAt: N - 1000, endedAt: N - 10 },
      ]);
      expect([...all.toolCalls].sort((a, b) => a.at - b.at)).toEqual([
        { tool: 'tools.wait', ms: 25, ok: true, at: N - 875 },
        { tool: 'tools.wait', ms: 40, ok: false, at: N - 40 },
      ]);
      expect(all.capped).toEqual({ ended: false, toolCalls: false });

      // One tenant's view holds its tasks alone.
      const b = await s.readStats({ since: SINCE, tenant: 'st-b' });
      expect(sortActive(b.active).map((a) => [a.status, a.count])).toEqual([
        ['pending', 2],
        ['running', 1],
      ]);
      expect(b.ended.map((t) => t.errorCode)).toEqual(['TOOL_FAILED']);
      expect(b.toolCalls).toEqual([]);
      expect((await s.readStats({ since: SINCE, tenant: 'nobody' })).active).toEqual([]);
    });
  });
}
