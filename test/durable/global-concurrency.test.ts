import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/durable/index.ts';
import { defineTool, ToolRegistry } from '../../src/index.ts';
import type { Lease, TaskStore } from '../../src/index.ts';
import { createSqliteTaskStore } from '../../src/store/index.ts';
import type { Runtime } from '../../src/api/index.ts';
import { until, useDurableFixture } from './fixture.ts';

// Two real runtimes, each with its own connection to one SQLite file: `concurrency` and `tenantConcurrency`
// bound the running tasks over both (README "Queue"), counted in the tasks table, never by timing.

/** One runtime under test: its own store connection, its tasks' holds, and whether a claim of it found nothing. */
interface Server {
  readonly runtime: Runtime;
  readonly store: TaskStore;
  readonly held: (() => void)[];
  readonly concurrency: number;
  refused: boolean;
}

/** The real store, with every claim's outcome noted (a claim that found nothing means the caps held it back). */
function noting(store: TaskStore, onClaim: (lease: Lease | null) => void): TaskStore {
  return new Proxy(store, {
    get(target, key) {
      // Bound to the store itself: its methods use private fields.
      const value = Reflect.get(target, key) as unknown;
      if (key !== 'claimTask') return typeof value === 'function' ? (value.bind(target) as unknown) : value;
      return async (...args: Parameters<TaskStore['claimTask']>) => {
        const lease = await target.claimTask(...args);
        onClaim(lease);
        return lease;
      };
    },
  });
}

describe('concurrency over every runtime on one database', () => {
  const fx = useDurableFixture('global-concurrency');
  let servers: Server[] = [];
  let peak = 0;
  afterEach(async () => {
    for (const s of servers) for (const release of s.held.splice(0)) release();
    await Promise.all(servers.map((s) => s.runtime.close()));
    await Promise.all(servers.map((s) => s.store.close()));
    servers = [];
  });

  /** Tasks running now, over every runtime: the tasks table as a third connection reads it. */
  const running = (where = ''): number => {
    const db = new Database(fx.path, { readonly: true });
    try {
      const row = db.prepare(`SELECT count(*) AS n FROM tasks WHERE status = 'running' ${where}`).get();
      return (row as { n: number }).n;
    } finally {
      db.close();
    }
  };

  const serve = async (options: { concurrency: number; tenantConcurrency?: number }): Promise<Server> => {
    const held: (() => void)[] = [];
    const tools = new ToolRegistry([
      defineTool({
        name: 'hold',
        description: 'holds its slot until the test lets it go',
        effect: 'read',
        execute: () => {
          // Sampled as each task starts its tool: the running count over both runtimes.
          peak = Math.max(peak, running());
          return new Promise<null>((resolve) => held.push(() => resolve(null)));
        },
      }),
    ]);
    const server = { held, concurrency: options.concurrency, refused: false } as Server;
    const store = noting(await createSqliteTaskStore({ path: fx.path }), (lease) => {
      if (lease === null) server.refused = true;
    });
    const runtime = createRuntime({ store, drivers: [fx.driver], tools, pollMs: 20, ...options });
    Object.assign(server, { store, runtime });
    servers.push(server);
    return server;
  };

  /** Every runtime has either filled all its own slots or tried a claim that the store refused. */
  const settledClaims = (): Promise<void> =>
    until(() => servers.every((s) => s.refused || s.held.length === s.concurrency));

  /** Lets the held tools go, one at a time, until every task has ended; checks the bound at each step. */
  const drain = async (ids: readonly string[], bound: () => void): Promise<void> => {
    const done = async (): Promise<boolean> =>
      (await Promise.all(ids.map((id) => fx.store.getTask(id)))).every((t) => t?.status === 'succeeded');
    while (!(await done())) {
      bound();
      await until(async () => servers.some((s) => s.held.length > 0) || (await done()));
      servers.find((s) => s.held.length > 0)?.held.shift()?.();
    }
  };

  it('never runs more than --concurrency tasks over two runtimes with that concurrency', async () => {
    peak = 0;
    const a = await serve({ concurrency: 3 });
    const b = await serve({ concurrency: 3 });
    const ids: string[] = [];
    for (let i = 0; i < 9; i++) {
      ids.push((await a.runtime.submit({ code: `await tools.hold({}); return ${i};` })).task_id);
    }
    a.runtime.start();
    await until(() => a.held.length === 3);
    a.refused = b.refused = false;
    b.runtime.start();
    await settledClaims();
    // Both have had their chance: the first holds its three, the second was refused (not given three more).
    expect({ running: running(), a: a.held.length, b: b.held.length }).toEqual({ running: 3, a: 3, b: 0 });
    await drain(ids, () => expect(running()).toBeLessThanOrEqual(3));
    expect(peak).toBeLessThanOrEqual(3);
  });

  it('holds --tenant-concurrency over two runtimes while other tenants go on', async () => {
    peak = 0;
    const a = await serve({ concurrency: 4, tenantConcurrency: 2 });
    const b = await serve({ concurrency: 4, tenantConcurrency: 2 });
    const ids: string[] = [];
    for (const tenant of ['acme', 'acme', 'acme', 'acme', 'acme', 'globex']) {
      ids.push((await a.runtime.submit({ code: 'await tools.hold({}); return 1;', tenant })).task_id);
    }
    a.runtime.start();
    b.runtime.start();
    await until(() => a.held.length + b.held.length === 3);
    a.refused = b.refused = false;
    await settledClaims();
    expect({ acme: running("AND tenant = 'acme'"), globex: running("AND tenant = 'globex'") }).toEqual({
      acme: 2,
      globex: 1,
    });
    await drain(ids, () => expect(running("AND tenant = 'acme'")).toBeLessThanOrEqual(2));
  });
});
