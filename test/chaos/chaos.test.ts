import { describe, expect, it } from 'vitest';
import { runChaos } from './chaos-run.ts';

// The chaos harness of issue 16 ("Proof"): real servers on one SQLite file, an external ledger, approvals and
// attentions decided through the API, SIGKILLs, a second server and a SIGSTOP past the lease. `npm test` runs a
// bounded size; `npm run test:chaos` a bigger one (CHAOS_TASKS, CHAOS_FAULTS, CHAOS_SEED override either).
// CHAOS_DUMP=FILE keeps the raw material of the run.

const full = process.env.CHAOS_SIZE === 'full';
const seed = Number(process.env.CHAOS_SEED ?? 20261202);
const tasks = Number(process.env.CHAOS_TASKS ?? (full ? 150 : 24));
const faults = Number(process.env.CHAOS_FAULTS ?? (full ? 10 : 4));

describe('chaos: crashes, a second server and a stopped one against an external ledger', () => {
  it(
    `seed ${seed}, ${tasks} tasks, ${faults} faults: nothing lost, wrong or charged twice`,
    async () => {
      const dumpTo = process.env.CHAOS_DUMP;
      const figures = await runChaos({ seed, tasks, faults, ...(dumpTo ? { dumpTo } : {}) });
      console.log(`[chaos] figures ${JSON.stringify(figures)}`);
      expect({
        lost: figures.lost,
        wrongResults: figures.wrongResults,
        unsafeTwiceByHolders: figures.unsafeTwiceByHolders,
        keyedTwoKeys: figures.keyedTwoKeys,
      }).toEqual({ lost: 0, wrongResults: 0, unsafeTwiceByHolders: 0, keyedTwoKeys: 0 });
      expect(figures.kills).toBeGreaterThan(0);
      // No false needs_attention, one round per crash, no side effect by a process without the lease (nor a
      // completed call run again), nothing claimed by a server that could not listen, its shutdown pauses taken
      // up by the live servers.
      const held = {
        unsafeTwice: figures.unsafeTwice,
        completedCallsRerun: figures.completedCallsRerun,
        writesWithoutLease: figures.writesWithoutLease,
        falseAttention: figures.falseAttention,
        extraAttentionRounds: figures.extraAttentionRounds,
        claimsByServersThatNeverServed: figures.claimsByServersThatNeverServed,
        shutdownPausesLeftWaiting: figures.shutdownPausesLeftWaiting,
      };
      if (figures.staleTokenWrites === null) {
        console.log(
          '[chaos] tools see no ctx.fencingToken: the ledger cannot fence, every stale write counts',
        );
      }
      expect(held).toEqual({
        unsafeTwice: 0,
        completedCallsRerun: 0,
        writesWithoutLease: 0,
        falseAttention: 0,
        extraAttentionRounds: 0,
        claimsByServersThatNeverServed: 0,
        shutdownPausesLeftWaiting: 0,
      });
    },
    full ? 1_800_000 : 120_000,
  );
});
