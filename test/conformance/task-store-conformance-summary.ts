import { describe, expect, it } from 'vitest';
import { CodecallError } from '../../src/errors/index.ts';
import {
  EMPTY_JOURNAL_SUMMARY,
  isCorruptTask,
  readSummaryForView,
  summarizeJournal,
} from '../../src/internal.ts';
import type { JournalEntryInput, TaskStore } from '../../src/internal.ts';
import type { TaskStoreConformanceOptions } from './task-store-conformance.ts';
import { codeInput, LEASE, T0 } from './task-store-support.ts';

/** Entries that move every part of a summary: an approval, an input wait, an attention pause, outcomes. */
const ENTRIES: readonly JournalEntryInput[] = [
  { type: 'tool_intent', data: { call_id: 'c1', tool: 'pay', args: '{"amount":1}' } },
  { type: 'tool_outcome', data: { call_id: 'c1', ok: true, payload: '1' } },
  {
    type: 'approval_request',
    data: { approval_id: 'c2', call_id: 'c2', tool: 'pay', args: '{"amount":2}', expires_at: T0 + 9 },
  },
  {
    type: 'approval_request',
    data: { approval_id: 'c3', call_id: 'c3', tool: 'pay', args: '{"amount":3}' },
  },
  { type: 'input_request', data: { call_id: 'c4', name: 'x', timeout_seconds: null, deadline: null } },
  { type: 'input_request', data: { call_id: 'c5', name: 'y', timeout_seconds: 1, deadline: T0 + 1000 } },
  { type: 'input_provided', data: { call_id: 'c4', name: 'x', value: '1', actor: 'ops' } },
  {
    type: 'control',
    data: {
      action: 'needs_attention',
      call_id: 'c6',
      tool: 'send',
      args: '"a"',
      calls: [
        { call_id: 'c6', tool: 'send', args: '"a"' },
        { call_id: 'c7', tool: 'send', args: '"b"' },
      ],
    },
  },
  { type: 'attention_decision', data: { call_id: 'c6', action: 'skip', actor: 'ops', reason: '' } },
];

/**
 * readJournalSummary / saveJournalSummary (ADR 0035): the summary a view reads instead of the journal is the fold
 * over the journal after every kind of write, and is given only while it is of the journal's head.
 */
export function registerSummaryCases(store: () => TaskStore, options: TaskStoreConformanceOptions): void {
  describe('journal summary', () => {
    async function running(): Promise<{ id: string; token: number }> {
      const s = store();
      const task = await s.createTask(codeInput(), { now: T0 });
      const lease = await s.claimTask('w1', { leaseMs: LEASE, now: T0, taskId: task.id });
      return { id: task.id, token: lease?.fencingToken ?? -1 };
    }

    it('equals the fold over the journal after creation, appends and an update that appends', async () => {
      const s = store();
      const { id, token } = await running();
      const fold = async () => summarizeJournal(await s.readJournal(id));
      expect(await s.readJournalSummary(id)).toEqual(await fold());
      expect(await s.readJournalSummary(id)).toMatchObject({ seq: 1, toolOutcomes: 0, approvals: [] });
      for (const entry of ENTRIES.slice(0, 4)) await s.appendJournal(id, [entry], { fencingToken: token });
      await s.appendJournal(id, ENTRIES.slice(4), { fencingToken: token });
      expect(await s.readJournalSummary(id)).toEqual(await fold());
      await s.updateTask(
        id,
        { status: 'paused', pauseReason: 'approval_required' },
        {
          fencingToken: token,
          append: [
            { type: 'approval_decision', data: { approval_id: 'c2', decision: 'approve', actor: 'ops' } },
          ],
        },
      );
      const summary = await s.readJournalSummary(id);
      expect(summary).toEqual(await fold());
      expect(summary).toMatchObject({
        seq: 11,
        toolOutcomes: 1,
        approvals: [{ id: 'c3', seq: 5, expiresAt: null }],
        inputs: [{ callId: 'c5', name: 'y', seq: 7, deadline: T0 + 1000 }],
        attention: { seq: 9, decided: ['c6'] },
      });
      const head = (await s.readJournal(id)).at(-1);
      expect(summary?.checksum).toBe(head?.checksum);
    });

    it('keeps nothing of a refused append', async () => {
      const s = store();
      const { id, token } = await running();
      const before = await s.readJournalSummary(id);
      await expect(s.appendJournal(id, ENTRIES, { fencingToken: token + 1 })).rejects.toThrow(CodecallError);
      await expect(
        s.appendJournal(id, ENTRIES, { fencingToken: token, limits: { maxEntries: 3 } }),
      ).rejects.toThrow(CodecallError);
      expect(await s.readJournalSummary(id)).toEqual(before);
    });

    it('saves a summary a reader folded only while it is of the journal head', async () => {
      const s = store();
      const { id, token } = await running();
      const stale = summarizeJournal(await s.readJournal(id));
      await s.appendJournal(id, ENTRIES.slice(0, 2), { fencingToken: token });
      expect(await s.saveJournalSummary(id, stale)).toBe(false);
      expect(await s.readJournalSummary(id)).toEqual(summarizeJournal(await s.readJournal(id)));
      expect(await s.saveJournalSummary(id, summarizeJournal(await s.readJournal(id)))).toBe(true);
      expect(await s.saveJournalSummary(id, EMPTY_JOURNAL_SUMMARY)).toBe(false);
    });

    it('is NOT_FOUND for a task that does not exist', async () => {
      await expect(store().readJournalSummary('task_missing')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    });

    it('gives a view the rows it shows, and a damaged one makes the task corrupt', async (ctx) => {
      const s = store();
      const { id, token } = await running();
      await s.appendJournal(id, ENTRIES, { fencingToken: token });
      const task = await s.getTask(id);
      if (!task) throw new Error('no task');
      const view = await readSummaryForView(s, task);
      if (isCorruptTask(view)) throw new Error(view.message);
      expect([...view.rows.keys()].sort((a, b) => a - b)).toEqual([1, 2, 4, 5, 7, 9, 10]);
      expect(view.rows.get(4)).toMatchObject({ type: 'approval_request', data: { approval_id: 'c2' } });
      if (!options.corrupt) return ctx.skip();
      await options.corrupt(s, id, 5);
      const damaged = await readSummaryForView(s, task);
      expect(isCorruptTask(damaged) ? damaged.message : 'not corrupt').toMatch(/seq 5/);
    });
  });
}
