import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/durable/index.ts';
import { newLeaseOwner } from '../../src/durable/lease-owner.ts';
import { defineTool, isCodecallError, ToolRegistry } from '../../src/internal.ts';
import type { QuickJsDriver, TaskStore } from '../../src/internal.ts';
import type { Runtime } from '../../src/api/index.ts';
import { journalAsDeadWorker, until, useDurableFixture } from './fixture.ts';

// `runtime.run(id, { signal })`, what `exec --db` and `tasks resume` do: a stop asked at any moment pauses the
// task (before the claim too), and a task whose worker died on this machine is taken over at once.

const linux = existsSync('/proc/sys/kernel/random/boot_id') && existsSync('/proc/self/ns/pid');

describe('runtime.run: the task runs here', () => {
  const fx = useDurableFixture('run-here');
  let driver: QuickJsDriver;
  let store: TaskStore;
  let runtime: Runtime;
  const ran: number[] = [];

  const program =
    'const out = []; for (let i = 0; i < 3; i++) out.push(await tools.step({ i })); return out;';

  beforeAll(() => {
    ({ driver, store } = fx);
    const tools = new ToolRegistry([
      defineTool({
        name: 'step',
        description: 'records i after 20 ms',
        effect: 'idempotent',
        execute: async (a) => {
          await new Promise((r) => setTimeout(r, 20));
          ran.push((a as { i: number }).i);
          return (a as { i: number }).i;
        },
      }),
    ]);
    // Not started: like a CLI, the runtime runs only what it is asked to.
    runtime = createRuntime({ store, drivers: [driver], tools });
  });
  afterAll(async () => {
    await runtime.close();
  });

  it('a signal aborted before the claim pauses the queued task without running it', async () => {
    ran.length = 0;
    const t = await runtime.submit({ code: program });
    const stop = new AbortController();
    stop.abort();
    const view = await runtime.run(t.task_id, { signal: stop.signal });
    expect(view).toMatchObject({ status: 'paused', pause_reason: 'user_request', resumable: true });
    expect(ran).toEqual([]);
    const done = await runtime.resume(t.task_id).then(() => runtime.run(t.task_id));
    expect(done).toMatchObject({ status: 'succeeded', result: { output: [0, 1, 2] } });
  });

  it('a signal aborted while the claim is under way pauses the run at once, before any call', async () => {
    ran.length = 0;
    const t = await runtime.submit({ code: program });
    const stop = new AbortController();
    const running = runtime.run(t.task_id, { signal: stop.signal });
    // The claim happens after this tick's microtasks; the abort lands between the call and the run's start.
    stop.abort();
    expect(await running).toMatchObject({ status: 'paused', pause_reason: 'user_request' });
    expect(ran).toEqual([]);
  });

  it('a signal aborted while it runs pauses it after the call under way', async () => {
    ran.length = 0;
    const t = await runtime.submit({ code: program });
    const stop = new AbortController();
    const running = runtime.run(t.task_id, { signal: stop.signal });
    await until(() => ran.length >= 1);
    stop.abort();
    expect(await running).toMatchObject({ status: 'paused', pause_reason: 'user_request' });
    expect(ran.length).toBeLessThan(3);
  });

  it.skipIf(!linux)(
    'takes over at once a task whose lease holder was a process of this machine that died',
    async () => {
      ran.length = 0;
      const child = spawn(process.execPath, ['-e', '']);
      await once(child, 'exit');
      const [host, , , machine, nonce] = newLeaseOwner().split(':');
      const dead = `${host}:${child.pid}:1:${machine}:${nonce}`;
      const task = await store.createTask({ kind: 'code', code: program, language: 'javascript', seed: 1 });
      await journalAsDeadWorker(store, task.id, [], { owner: dead, leaseMs: 60_000, keepLease: true });
      const started = Date.now();
      const done = await runtime.run(task.id);
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(done).toMatchObject({ status: 'succeeded', attempts: 2 });
    },
  );

  it('refuses a task whose lease a live worker holds, naming who and until when', async () => {
    const task = await store.createTask({ kind: 'code', code: program, language: 'javascript', seed: 1 });
    // This process's own pid: alive, and never judged gone.
    const live = newLeaseOwner();
    await journalAsDeadWorker(store, task.id, [], { owner: live, leaseMs: 60_000, keepLease: true });
    const lease = (await store.getTask(task.id))?.lease;
    expect(lease?.owner).toBe(live);
    expect(lease?.expiresAt).toBeGreaterThan(Date.now());
    const refused = await runtime.run(task.id).catch((e: unknown) => e);
    expect(isCodecallError(refused) && refused.code).toBe('ILLEGAL_TRANSITION');
    const message = (refused as Error).message;
    expect(message).toMatch(
      /running in another worker; this process \(pid \d+\) holds its lease until \d{4}-/,
    );
    expect((refused as { details?: unknown }).details).toMatchObject({
      status: 'running',
      lease_owner: live,
      lease_expires_at: lease?.expiresAt,
    });
  });
});
