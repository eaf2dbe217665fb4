import { afterEach, describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/durable/index.ts';
import { defineTool, ToolRegistry } from '../../src/index.ts';
import type { ExecuteOptions, ExecutionRequest, ExecutionResult, SandboxDriver } from '../../src/index.ts';
import { useDurableFixture } from './fixture.ts';
import type { Runtime } from '../../src/api/index.ts';

// The queue over a real store and the real quickjs driver: priority, the per-tenant cap, retries of
// infrastructure failures and deadlines.

/** The real driver, whose first `failures` executions end as a crashed sandbox would (fault injection). */
function flaky(inner: SandboxDriver, failures: number): SandboxDriver & { calls: number } {
  const driver = {
    name: inner.name,
    apiVersion: inner.apiVersion,
    engine: inner.engine,
    languages: inner.languages,
    ...(inner.supportsReplayScript === undefined ? {} : { supportsReplayScript: inner.supportsReplayScript }),
    calls: 0,
    ready: () => inner.ready(),
    close: () => Promise.resolve(),
    async execute(request: ExecutionRequest, options?: ExecuteOptions): Promise<ExecutionResult> {
      driver.calls++;
      const result = await inner.execute(request, options);
      if (driver.calls > failures) return result;
      const error = { code: 'SANDBOX_CRASHED', name: 'Error', message: 'the sandbox worker died' };
      return { status: 'failed', error, logs: result.logs, resources: result.resources };
    },
  };
  return driver;
}

describe('task queue', () => {
  const fx = useDurableFixture('queue');
  const order: string[] = [];
  const active = new Map<string, number>();
  let peak: Record<string, number> = {};
  const tools = new ToolRegistry([
    defineTool({
      name: 'mark',
      description: 'records the order tasks ran in',
      effect: 'read',
      execute: (a) => {
        order.push((a as { name: string }).name);
        return null;
      },
    }),
    defineTool({
      name: 'wait',
      description: 'waits until aborted',
      effect: 'read',
      execute: (_a, ctx) =>
        new Promise((_resolve, reject) =>
          ctx.signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true }),
        ),
    }),
    defineTool({
      name: 'busy',
      description: 'holds a tenant slot for a while',
      effect: 'read',
      execute: async (a) => {
        const { tenant, ms } = a as { tenant: string; ms: number };
        active.set(tenant, (active.get(tenant) ?? 0) + 1);
        peak[tenant] = Math.max(peak[tenant] ?? 0, active.get(tenant) ?? 0);
        await new Promise((r) => setTimeout(r, ms));
        active.set(tenant, (active.get(tenant) ?? 0) - 1);
        return null;
      },
    }),
  ]);
  let runtimes: Runtime[] = [];
  // Each test's runtimes stop before the next test queues work (a started runtime claims anything).
  afterEach(async () => {
    await Promise.all(runtimes.map((r) => r.close()));
    runtimes = [];
  });
  const make = (options: Partial<Parameters<typeof createRuntime>[0]> = {}): Runtime => {
    const r = createRuntime({ store: fx.store, drivers: [fx.driver], tools, pollMs: 20, ...options });
    runtimes.push(r);
    return r;
  };

  it('runs higher priorities first, FIFO within one', async () => {
    const runtime = make({ concurrency: 1 });
    const mark = (name: string) => `await tools.mark({ name: ${JSON.stringify(name)} });`;
    for (const [name, priority] of [
      ['low-1', -5],
      ['mid-1', 0],
      ['high-1', 10],
      ['mid-2', 0],
      ['high-2', 10],
    ] as const) {
      await runtime.submit({ code: mark(name), priority, sessionId: 'prio' });
    }
    runtime.start();
    const { tasks } = await runtime.list({ sessionId: 'prio' });
    await Promise.all(tasks.map((t) => runtime.wait(t.task_id, { until: 'terminal' })));
    expect(order).toEqual(['high-1', 'high-2', 'mid-1', 'mid-2', 'low-1']);
    expect(tasks.map((t) => t.priority)).toEqual([-5, 0, 10, 0, 10]);
  });

  it('runs at most tenantConcurrency tasks of one tenant at once, while other tenants go on', async () => {
    peak = {};
    const runtime = make({ concurrency: 6, tenantConcurrency: 2 });
    const ids: string[] = [];
    for (const tenant of ['acme', 'acme', 'acme', 'acme', 'acme', 'globex', 'globex']) {
      const code = `await tools.busy({ tenant: ${JSON.stringify(tenant)}, ms: 150 });`;
      ids.push((await runtime.submit({ code, tenant })).task_id);
    }
    runtime.start();
    const ended = await Promise.all(ids.map((id) => runtime.wait(id, { until: 'terminal' })));
    expect(ended.map((v) => v.status)).toEqual(ended.map(() => 'succeeded'));
    expect(peak).toEqual({ acme: 2, globex: 2 });
    expect((await runtime.list({ tenant: 'globex' })).tasks.map((t) => t.tenant)).toEqual([
      'globex',
      'globex',
    ]);
  });

  it('retries an infrastructure failure up to max_retries with a backoff, then fails', async () => {
    const twice = flaky(fx.driver, 2);
    const runtime = make({ drivers: [twice], retryBaseMs: 40 });
    const ok = await runtime.submit({
      code: 'await tools.mark({ name: "retried" }); return 7;',
      maxRetries: 3,
    });
    runtime.start();
    const view = await runtime.wait(ok.task_id, { until: 'terminal' });
    expect(view).toMatchObject({ status: 'succeeded', retries: 2, max_retries: 3, result: { output: 7 } });
    // The first runs' tool call is journaled once and replayed, never run again.
    expect(order.filter((n) => n === 'retried')).toEqual(['retried']);
    expect(twice.calls).toBe(3);
    await runtime.close();

    const always = flaky(fx.driver, 100);
    const second = make({ drivers: [always], retryBaseMs: 10 });
    const doomed = await second.submit({ code: 'return 1', maxRetries: 2 });
    second.start();
    expect(await second.wait(doomed.task_id, { until: 'terminal' })).toMatchObject({
      status: 'failed',
      retries: 2,
      error: { code: 'SANDBOX_CRASHED' },
    });
    expect(always.calls).toBe(3);
    // A failure of the program itself is never retried.
    await second.close();
    const third = make();
    const own = await third.submit({ code: 'throw new Error("mine")', maxRetries: 5 });
    third.start();
    expect(await third.wait(own.task_id, { until: 'terminal' })).toMatchObject({
      status: 'failed',
      retries: 0,
    });
  });

  it('claims again after work arrived while every slot was taken (regression: a fill that ended at once)', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const gated = new ToolRegistry([
      defineTool({ name: 'gate', description: 'waits for the test', effect: 'read', execute: () => gate }),
    ]);
    const runtime = make({ concurrency: 1, tools: gated });
    runtime.start();
    const first = await runtime.submit({ code: 'await tools.gate({}); return 1;' });
    for (let i = 0; i < 200 && (await runtime.get(first.task_id))?.status !== 'running'; i++) {
      await new Promise((r) => setTimeout(r, 10));
    }
    // Submitted with the only slot taken: its fill finds no room and ends synchronously.
    const second = await runtime.submit({ code: 'return 2' });
    release();
    expect(await runtime.wait(first.task_id, { until: 'terminal' })).toMatchObject({ status: 'succeeded' });
    expect(await runtime.wait(second.task_id, { until: 'terminal' })).toMatchObject({
      status: 'succeeded',
      result: { output: 2 },
    });
  });

  it('fails a task past its deadline, running or queued', async () => {
    const runtime = make();
    const slow = await runtime.submit({
      code: 'await tools.wait({}); return 1;',
      deadlineAt: Date.now() + 300,
    });
    const late = await runtime.submit({ code: 'return 2', deadlineAt: Date.now() - 1 });
    const started = Date.now();
    runtime.start();
    expect(await runtime.wait(slow.task_id, { until: 'terminal' })).toMatchObject({
      status: 'failed',
      error: { code: 'DEADLINE_EXCEEDED' },
    });
    expect(Date.now() - started).toBeLessThan(4000);
    expect(await runtime.wait(late.task_id, { until: 'terminal' })).toMatchObject({
      status: 'failed',
      error: { code: 'DEADLINE_EXCEEDED' },
    });
    // A task waiting for a human past its deadline fails too.
    const waiting = await runtime.submit({
      code: "return await input.wait('answer')",
      deadlineAt: Date.now() + 300,
    });
    expect(await runtime.wait(waiting.task_id)).toMatchObject({
      status: 'paused',
      pause_reason: 'awaiting_input',
    });
    expect(await runtime.wait(waiting.task_id, { until: 'terminal' })).toMatchObject({
      status: 'failed',
      error: { code: 'DEADLINE_EXCEEDED' },
    });
  });
});
