import { describe, expect, it } from 'vitest';
import { readJournalPaged } from '../../src/internal.ts';
import type { JournalEntryInput, TaskStore } from '../../src/internal.ts';
import type { TaskStoreConformanceOptions } from './task-store-conformance.ts';
import { codeInput, expectCode, LEASE, T0 } from './task-store-support.ts';

/**
 * The read a resume from a kept paused VM makes (ADR 0056, amended 2026-12-07): the journal from seq N on
 * (`afterSeq: N - 1`), chain-verified from the stored checksum before N, in pages. The entry at N comes as
 * stored (its checksum vouches for the journal before it), a damaged row from N on is CHECKPOINT_CORRUPT, and a
 * damaged row before N - 1 is not looked at.
 */
export function registerTailCases(store: () => TaskStore, options: TaskStoreConformanceOptions): void {
  describe('journal from a seq on', () => {
    const clocks = (n: number): JournalEntryInput[] =>
      Array.from({ length: n }, (_, i) => ({ type: 'clock' as const, data: { clock: i + 1 } }));

    async function journaled(n: number): Promise<string> {
      const s = store();
      const task = await s.createTask(codeInput(), { now: T0 });
      const lease = await s.claimTask('w1', { leaseMs: LEASE, now: T0, taskId: task.id });
      await s.appendJournal(task.id, clocks(n), { fencingToken: lease?.fencingToken ?? -1 });
      return task.id;
    }

    it('gives the entry at the seq as stored and every one after it, as the whole read does', async () => {
      const s = store();
      const id = await journaled(40);
      const whole = await s.readJournal(id);
      expect(whole).toHaveLength(41);
      for (const seq of [1, 2, 20, 41]) {
        const tail = await readJournalPaged(s, id, { afterSeq: seq - 1 });
        expect(tail).toEqual(whole.slice(seq - 1));
        expect(await s.readJournal(id, { afterSeq: seq - 1 })).toEqual(tail);
      }
      expect(await readJournalPaged(s, id, { afterSeq: 41 })).toEqual([]);
    });

    it('reads a long tail in pages that join up', async () => {
      const s = store();
      const task = await s.createTask(codeInput(), { now: T0 });
      const lease = await s.claimTask('w1', { leaseMs: LEASE, now: T0, taskId: task.id });
      // ~3 MiB of data: three pages or more of JOURNAL_PAGE_BYTES.
      const big = 'x'.repeat(300 * 1024);
      const entries = Array.from({ length: 10 }, (_, i) => ({
        type: 'tool_outcome' as const,
        data: { call_id: `c${i}`, ok: true, payload: JSON.stringify(big) },
      }));
      await s.appendJournal(task.id, entries, { fencingToken: lease?.fencingToken ?? -1 });
      const whole = await s.readJournal(task.id);
      expect(await readJournalPaged(s, task.id, { afterSeq: 2 })).toEqual(whole.slice(2));
    });

    it.runIf(options.corrupt !== undefined)(
      `is CHECKPOINT_CORRUPT for a damaged row from the seq on, and does not read the rows before${options.corrupt === undefined ? ' [skipped: this store has no corrupt() hook]' : ''}`,
      async () => {
        const s = store();
        const id = await journaled(10);
        await options.corrupt?.(s, id, 8);
        for (const from of [5, 8]) {
          const error = await expectCode(
            readJournalPaged(s, id, { afterSeq: from - 1 }),
            'CHECKPOINT_CORRUPT',
          );
          expect(error.details).toMatchObject({ taskId: id, seq: 8 });
        }
        // From 9 on, the chain starts at the stored checksum of 8: the damage before it is not looked at.
        expect((await readJournalPaged(s, id, { afterSeq: 8 })).map((e) => e.seq)).toEqual([9, 10, 11]);
      },
    );
  });
}
