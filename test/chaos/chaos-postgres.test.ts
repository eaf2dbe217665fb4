import { describe, expect, it } from 'vitest';
import { postgresSkipReason, postgresUrl } from '../support/postgres-store.ts';
import { runChaos } from './chaos-run.ts';

// Issue 20's proof: three `codecall serve` nodes on one PostgreSQL database, two tenants with keys of their own, seeded SIGKILLs and a SIGSTOP past the
// lease, against the external ledger. `npm test` runs a bounded size; `npm run test:chaos` the (500 tasks,
// at least 10 kills). CHAOS_SEED, CHAOS_PG_TASKS and CHAOS_PG_FAULTS override.

const url = postgresUrl();
const full = process.env.CHAOS_SIZE === 'full';
const seed = Number(process.env.CHAOS_SEED ?? 20261206);
const tasks = Number(process.env.CHAOS_PG_TASKS ?? (full ? 500 : 40));
const faults = Number(process.env.CHAOS_PG_FAULTS ?? (full ? 14 : 6));
const kills = full ? 10 : 3;

if (url === null) {
  describe('chaos on PostgreSQL', () => {
    it.skip(postgresSkipReason(), () => undefined);
  });
} else {
  describe('chaos on PostgreSQL: three nodes, kills and a stop past the lease', () => {
    it(
      `seed ${seed}, ${tasks} tasks, ${faults} faults (${kills}+ kills): nothing lost, wrong or charged twice`,
      async () => {
        const dumpTo = process.env.CHAOS_DUMP;
        const figures = await runChaos({
          seed,
          tasks,
          faults,
          kills,
          servers: 3,
          postgres: url,
          concurrency: 4,
          webhooks: true,
          tenants: ['acme', 'globex'],
          settleMs: full ? 600_000 : 90_000,
          ...(dumpTo ? { dumpTo } : {}),
        });
        console.log(`[chaos:postgres] figures ${JSON.stringify(figures)}`);
        expect(figures.kills).toBeGreaterThanOrEqual(kills);
        // Every task's end told at least once, every delivery signed; the database's chains intact.
        expect(figures.webhooks).toMatchObject({ unsigned: 0, tasksNeverTold: 0 });
        expect(figures.webhooks?.batchCompleted).toBeGreaterThanOrEqual(2);
        // Keyed (every node given the same key): the keyed chain, signed heads and task fields verified too.
        expect(figures.auditVerify).toEqual({ exitCode: 0, keyed: true, output: '' });
        expect(figures.stops).toBeGreaterThanOrEqual(1);
        expect({
          lost: figures.lost,
          wrongResults: figures.wrongResults,
          completedCallsRerun: figures.completedCallsRerun,
          unsafeTwice: figures.unsafeTwice,
          keyedTwoKeys: figures.keyedTwoKeys,
          writesWithoutLease: figures.writesWithoutLease,
          falseAttention: figures.falseAttention,
          extraAttentionRounds: figures.extraAttentionRounds,
          claimsByServersThatNeverServed: figures.claimsByServersThatNeverServed,
          shutdownPausesLeftWaiting: figures.shutdownPausesLeftWaiting,
        }).toEqual({
          lost: 0,
          wrongResults: 0,
          completedCallsRerun: 0,
          unsafeTwice: 0,
          keyedTwoKeys: 0,
          writesWithoutLease: 0,
          falseAttention: 0,
          extraAttentionRounds: 0,
          claimsByServersThatNeverServed: 0,
          shutdownPausesLeftWaiting: 0,
        });
      },
      full ? 3_600_000 : 240_000,
    );
  });
}
