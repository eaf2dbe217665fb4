import { describe, expect, it } from 'vitest';
import { createPostgresTaskStore } from '../../src/store/postgres/create-postgres-task-store.ts';
import { verifyPostgresAudit } from '../../src/store/postgres/pg-verify-audit.ts';
import { verifyStore } from '../../src/store/index.ts';
import { codeInput } from '../conformance/task-store-support.ts';
import { KEY } from '../support/keyed-workload.ts';
import { freshSchema, postgresSkipReason, postgresUrl } from '../support/postgres-store.ts';

// Several nodes keying one PostgreSQL schema at once (ADR 0030, 0042): the first keyed opens race to key it, then
// creations and claims on both nodes raise the signed count and write heads concurrently. It must all verify clean.

const url = postgresUrl();

if (url === null) {
  describe('keyed audit with several nodes on PostgreSQL', () => {
    it.skip(postgresSkipReason(), () => undefined);
  });
} else {
  describe('keyed audit with several nodes on PostgreSQL', () => {
    it('keys an unkeyed schema once when nodes open at once, and counts and chains their writes exactly', async () => {
      const schema = freshSchema('pgn');
      const open = (auditKey: Buffer | null) =>
        createPostgresTaskStore({ url: url ?? '', schema, auditKey, poolSize: 4 });
      const unkeyed = await open(null);
      for (let i = 0; i < 5; i++) await unkeyed.createTask(codeInput(`return ${i}`));
      await unkeyed.close();
      const nodes = await Promise.all([open(KEY), open(KEY), open(KEY)]);
      try {
        await Promise.all(
          nodes.map(async (node, n) => {
            for (let i = 0; i < 10; i++) await node.createTask(codeInput(`return ${n * 100 + i}`));
          }),
        );
        await Promise.all(
          nodes.map(async (node, n) => {
            for (;;) {
              const lease = await node.claimTask(`node-${n}`, { leaseMs: 60_000 });
              if (lease === null) return;
              await node.appendJournal(lease.taskId, [{ type: 'clock', data: { clock: n } }], {
                fencingToken: lease.fencingToken,
              });
              await node.updateTask(
                lease.taskId,
                { status: 'succeeded', result: String(n) },
                { fencingToken: lease.fencingToken },
              );
            }
          }),
        );
        const chains = await verifyStore(nodes[0] ?? unkeyed);
        expect(chains).toMatchObject({ tasks: 35, broken: [] });
      } finally {
        await Promise.all(nodes.map((node) => node.close()));
      }
      const report = await verifyPostgresAudit({ url: url ?? '', schema, key: KEY });
      // The five old tasks' `created` rows are legacy; every other row is keyed (created, running, succeeded).
      expect(report).toEqual({ keyed: true, legacyRows: 5, keyedRows: 30 * 3 + 5 * 2, findings: [] });
    });
  });
}
