import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import { createRuntime } from '../../src/durable/index.ts';
import { defineTool, ToolRegistry } from '../../src/index.ts';
import type { SandboxDriver, TaskStore } from '../../src/index.ts';
import { createSqliteTaskStore } from '../../src/store/index.ts';
import { FaultyRecordingStore, WriteRecorder } from './faulty-recording-store.ts';
import type { Runtime } from '../../src/api/index.ts';

// The world of one property run: one SQLite file, runtimes (each on its own connection behind a wrapper that
// records writes and can crash), the tools and the program every task runs.

export const LEASE_MS = 200;
export const POLL_MS = 40;
export const SEED = 7;
export const UNSAFE_MS = 25;
export const SLOW_MS = 15;

/**
 * Approvals for two unsafe calls in one Promise.allSettled (beside an idempotent call that takes a while), then an
 * input wait, then more calls in parallel and some CPU: every kind of pause can happen, and a crash can land anywhere.
 */
export const PROGRAM = `
const a = await tools.read({ k: 'a' });
const settled = await Promise.allSettled([
  tools.unsafe({ n: 1 }),
  tools.unsafe({ n: 2 }),
  tools.slow({ ms: ${SLOW_MS} }),
]);
const calls = settled.map((r) => (r.status === 'fulfilled' ? r.value : r.reason.name + ':' + r.reason.code));
const x = await input.wait('x');
const [b, c] = await Promise.all([tools.read({ k: 'b' + x }), tools.slow({ ms: 5 })]);
let spin = 0;
while (spin < 100000) spin++;
return { a, calls, x, b, c, spin, roll: Math.floor(Math.random() * 1e6) };
`;

/** Every execution of the unsafe tool, by idempotency key (`task:block:call`): its effect happened (or began). */
export const unsafeRuns: string[] = [];

export const tools = new ToolRegistry([
  defineTool({
    name: 'read',
    description: 'reads',
    effect: 'read',
    execute: (a) => `read:${String((a as { k: unknown }).k)}`,
  }),
  defineTool({
    name: 'unsafe',
    description: 'changes the world; not safe to repeat; takes a moment and does not stop when aborted',
    effect: 'unsafe',
    requiresApproval: true,
    execute: async (a, ctx) => {
      unsafeRuns.push(ctx.idempotencyKey ?? `?:${ctx.callId}`);
      await sleep(UNSAFE_MS);
      return `unsafe:${String((a as { n: unknown }).n)}`;
    },
  }),
  defineTool({
    name: 'slow',
    description: 'waits (stops when aborted)',
    effect: 'idempotent',
    execute: async (a, ctx) => {
      const ms = Number((a as { ms: unknown }).ms);
      await sleep(ms, undefined, { signal: ctx.signal });
      return `slow:${ms}`;
    },
  }),
]);

export interface Node {
  readonly runtime: Runtime;
  readonly store: FaultyRecordingStore;
}

export class World {
  readonly recorder = new WriteRecorder();
  /** The runtimes the test acts through (alive). */
  readonly live: Node[] = [];
  /** Crashed or stopped runtimes (closed at the end). */
  private readonly gone: Node[] = [];
  private spawned = 0;

  private constructor(
    private readonly path: string,
    private readonly driver: SandboxDriver,
    /** A plain connection for the test's own reads (never wrapped, never writes). */
    readonly observer: TaskStore,
  ) {}

  static async open(dir: string, driver: SandboxDriver, runtimes: number): Promise<World> {
    const path = join(dir, 'tasks.db');
    const world = new World(path, driver, await createSqliteTaskStore({ path }));
    for (let i = 0; i < runtimes; i++) world.live.push(await world.spawn());
    return world;
  }

  node(index: number): Node {
    const node = this.live[index % this.live.length];
    if (!node) throw new Error('no live runtime');
    return node;
  }

  via(index: number): Runtime {
    return this.node(index).runtime;
  }

  /**
   * The runtime dies after `afterWrites` more writes (so at a precise point of a run, e.g. between a call's intent
   * and its outcome); a new runtime (new owner) takes its place in the list at once.
   */
  async crash(index: number, afterWrites: number): Promise<void> {
    const at = index % this.live.length;
    const victim = this.live[at];
    if (!victim) return;
    victim.store.crash(afterWrites);
    this.gone.push(victim);
    this.live[at] = await this.spawn();
  }

  /** A graceful stop: running tasks pause (`shutdown`); a new runtime takes its place. */
  async restart(index: number): Promise<void> {
    const at = index % this.live.length;
    const victim = this.live[at];
    if (!victim) return;
    this.live.splice(at, 1);
    this.gone.push(victim);
    await victim.runtime.close({ pauseRunning: true });
    this.live.splice(at, 0, await this.spawn());
  }

  /** Stops every runtime; dead ones' runs end once their lease renewals fail, and close waits for them. */
  async closeRuntimes(): Promise<void> {
    const all = [...this.live, ...this.gone];
    await Promise.allSettled(all.map((n) => n.runtime.close()));
  }

  async close(): Promise<void> {
    await this.closeRuntimes();
    const all = [...this.live, ...this.gone];
    await Promise.allSettled(all.map((n) => n.store.closeInner()));
    await this.observer.close();
  }

  private async spawn(): Promise<Node> {
    const name = `rt-${this.spawned++}`;
    const store = new FaultyRecordingStore(
      await createSqliteTaskStore({ path: this.path }),
      this.recorder,
      name,
    );
    const runtime = createRuntime({
      store,
      drivers: [this.driver],
      tools,
      owner: name,
      leaseMs: LEASE_MS,
      pollMs: POLL_MS,
      concurrency: 2,
    });
    runtime.start();
    return { runtime, store };
  }
}
