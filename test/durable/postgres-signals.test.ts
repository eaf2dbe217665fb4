import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime, TaskRunner } from '../../src/durable/index.ts';
import { createQuickJsDriver, ToolRegistry } from '../../src/internal.ts';
import type { QuickJsDriver, StoreSignal } from '../../src/internal.ts';
import type { PostgresTaskStore } from '../../src/store/postgres/pg-task-store.ts';
import { codeInput } from '../conformance/task-store-conformance.ts';
import {
  createTestPostgresStore,
  freshSchema,
  postgresSkipReason,
  postgresUrl,
} from '../support/postgres-store.ts';

// Nodes hear of work, control requests and changes through the database (LISTEN/NOTIFY), not by polling: every
// poll here is ten minutes long, so only a signal can make these cases pass within the test's time.

const POLL_NEVER = 600_000;

async function until(check: () => Promise<boolean> | boolean, what: string): Promise<void> {
  for (let i = 0; i < 1000; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`never: ${what}`);
}

if (postgresUrl() === null) {
  describe('PostgreSQL signals between nodes', () => {
    it.skip(postgresSkipReason(), () => undefined);
  });
} else {
  describe('PostgreSQL signals between nodes', () => {
    let driver: QuickJsDriver;
    let a: PostgresTaskStore;
    let b: PostgresTaskStore;
    const tools = new ToolRegistry([]);

    beforeAll(async () => {
      driver = createQuickJsDriver({ workers: 1, warmVmsPerWorker: 1 });
      const schema = freshSchema('signals');
      a = await createTestPostgresStore({ schema });
      b = await createTestPostgresStore({ schema });
    });
    afterAll(async () => {
      await a.close();
      await b.close();
      await driver.close();
    });

    it('tells every node of work, control requests and changes made on another', async () => {
      const heard: StoreSignal[] = [];
      const off = a.watch((s) => heard.push(s));
      try {
        // The LISTEN connection opens asynchronously: a signal sent now may go unheard, so send until one is heard.
        await until(async () => {
          await b.createTask(codeInput());
          return heard.some((s) => s.kind === 'work');
        }, 'a work signal');
        expect(heard.some((s) => s.kind === 'changed')).toBe(true);
        const lease = await b.claimTask('node-b', { leaseMs: 60_000 });
        if (lease === null) throw new Error('nothing to claim');
        heard.length = 0;
        await b.requestControl(lease.taskId, 'pause');
        await until(() => heard.some((s) => s.kind === 'control'), 'a control signal');
        expect(heard.find((s) => s.kind === 'control')).toEqual({
          kind: 'control',
          taskId: lease.taskId,
          owner: 'node-b',
          action: 'pause',
        });
        heard.length = 0;
        await b.appendJournal(lease.taskId, [{ type: 'clock', data: { clock: 1 } }], {
          fencingToken: lease.fencingToken,
        });
        await until(() => heard.some((s) => s.kind === 'changed'), 'a changed signal after an append');
        heard.length = 0;
        await b.releaseLease(lease);
        await until(() => heard.some((s) => s.kind === 'work'), 'a work signal for a lease given up');
      } finally {
        off();
      }
    });

    it('a node claims work submitted on another when told, not at its poll', async () => {
      const worker = createRuntime({
        store: a,
        drivers: [driver],
        tools,
        pollMs: POLL_NEVER,
        owner: 'worker-a',
      });
      const api = createRuntime({ store: b, drivers: [], tools, pollMs: POLL_NEVER, owner: 'api-b' });
      worker.start();
      try {
        // The first sweep at start finds nothing; the LISTEN connection is up once a signal is heard.
        const heard: StoreSignal[] = [];
        const off = a.watch((s) => heard.push(s));
        await until(async () => {
          await b.appendJournal('task_none', [], { fencingToken: 0 }).catch(() => undefined);
          await b.pool.query(`SELECT pg_notify('codecall_' || current_schema(), '{"kind":"changed"}')`);
          return heard.length > 0;
        }, 'the LISTEN connection');
        off();
        const t = await api.submit({ code: 'return 6 * 7;' });
        // Read, not waited for: B's own wait would poll every ten minutes too.
        await until(
          async () => (await b.getTask(t.task_id))?.status === 'succeeded',
          'the task to succeed on A',
        );
        expect((await b.getTask(t.task_id))?.result).toBe('42');
      } finally {
        await worker.close();
        await api.close();
      }
    });

    it('a pause asked on one node reaches the node running the task when told, not at its poll', async () => {
      const runner = new TaskRunner({
        store: a,
        driver,
        tools,
        owner: 'runner-a',
        controlPollMs: POLL_NEVER,
      });
      const api = createRuntime({ store: b, drivers: [], tools, pollMs: POLL_NEVER, owner: 'api-b' });
      try {
        const t = await api.submit({ code: 'let n = 0; while (true) n++;', limits: { timeoutMs: 60_000 } });
        const run = runner.runTask(t.task_id);
        // Set up (5 entries): the program is spinning in its sandbox.
        await until(async () => (await b.readJournal(t.task_id)).length >= 5, 'the run');
        await api.pause(t.task_id, { actor: 'ops' });
        expect(await run).toMatchObject({ status: 'paused', pauseReason: 'user_request' });
        await api.cancel(t.task_id);
      } finally {
        await api.close();
      }
    });
  });
}
