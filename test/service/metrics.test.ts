import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/durable/index.ts';
import { buildServer } from '../../src/http/index.ts';
import { createQuickJsDriver, defineTool, ToolRegistry } from '../../src/internal.ts';
import type { QuickJsDriver } from '../../src/internal.ts';
import { createMetrics } from '../../src/metrics/index.ts';
import type { Metrics } from '../../src/metrics/index.ts';
import { useDurableFixture } from '../durable/fixture.ts';
import type { Runtime } from '../../src/api/index.ts';

// GET /metrics over a real runtime (SQLite file, quickjs driver reporting to the metrics), through inject.

/** The value of one sample of the Prometheus text: `name` with exactly these labels (0 when absent). */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const found: Record<string, string> = {};
    for (const x of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) found[x[1] ?? ''] = x[2] ?? '';
    const wanted = Object.entries(labels);
    if (wanted.length === Object.keys(found).length && wanted.every(([k, v]) => found[k] === v)) {
      return Number(m[3]);
    }
  }
  return 0;
}

describe('GET /metrics', () => {
  const fx = useDurableFixture('metrics');
  let metrics: Metrics;
  let driver: QuickJsDriver;
  let runtime: Runtime;
  let app: ReturnType<typeof buildServer>;

  beforeAll(async () => {
    // The metrics come first: the driver and the runtime report to them through their observers.
    metrics = createMetrics({ store: fx.store });
    driver = createQuickJsDriver({ workers: 1, warmVmsPerWorker: 1, observer: metrics.sandboxObserver });
    const tools = new ToolRegistry([
      defineTool({ name: 'pay', description: 'pays', effect: 'read', execute: () => 'paid' }),
      defineTool({
        name: 'boom',
        description: 'always fails',
        effect: 'read',
        execute: () => {
          throw new Error('boom');
        },
      }),
    ]);
    runtime = createRuntime({
      store: fx.store,
      drivers: [driver],
      tools,
      pollMs: 20,
      observer: metrics.runtimeObserver,
    });
    metrics.watch(runtime);
    app = buildServer({ runtime, store: fx.store, metrics });
    await app.ready();
  });
  afterAll(async () => {
    await app.close();
    await runtime.close();
    metrics.close();
    await driver.close();
  });

  const scrape = async (): Promise<string> => {
    const res = await app.inject({ url: '/metrics' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/plain');
    return res.body;
  };
  const submit = async (code: string): Promise<string> => {
    const res = await app.inject({ method: 'POST', url: '/api/v1/tasks', payload: { code } });
    expect(res.statusCode).toBe(201);
    return res.json<{ task_id: string }>().task_id;
  };
  const until = async (id: string, done: (status: string) => boolean): Promise<Record<string, unknown>> => {
    for (let i = 0; i < 1000; i++) {
      const view = (await runtime.get(id)) as unknown as Record<string, unknown>;
      if (done(String(view.status))) return view;
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error(`task ${id} never got there`);
  };
  /** Scrapes until `check` passes: some observations land just after the status event (a store read). */
  const eventually = async (check: (text: string) => void): Promise<void> => {
    for (let i = 0; ; i++) {
      const text = await scrape();
      try {
        check(text);
        return;
      } catch (e) {
        if (i > 100) throw e;
        await new Promise((r) => setTimeout(r, 10));
      }
    }
  };

  it('counts queued tasks while nothing runs them, then their durations once they have run', async () => {
    const ids = [await submit('return 1'), await submit('return 2'), await submit('return 3')];
    const queued = await scrape();
    expect(sample(queued, 'codecall_queue_depth')).toBe(3);
    expect(sample(queued, 'codecall_tasks', { status: 'pending' })).toBe(3);
    expect(sample(queued, 'codecall_tasks', { status: 'running' })).toBe(0);
    expect(sample(queued, 'codecall_task_duration_seconds_count', { status: 'succeeded' })).toBe(0);
    // Process metrics, on this registry of its own.
    expect(queued).toContain('codecall_process_cpu_user_seconds_total');

    runtime.start();
    for (const id of ids) await until(id, (s) => s === 'succeeded');
    await eventually((text) => {
      expect(sample(text, 'codecall_queue_depth')).toBe(0);
      expect(sample(text, 'codecall_tasks', { status: 'pending' })).toBe(0);
      expect(sample(text, 'codecall_task_duration_seconds_count', { status: 'succeeded' })).toBe(3);
      expect(sample(text, 'codecall_task_duration_seconds_sum', { status: 'succeeded' })).toBeGreaterThan(0);
      // Each execution created and disposed a VM, timed in the worker thread.
      expect(sample(text, 'codecall_sandbox_create_seconds_count')).toBeGreaterThanOrEqual(3);
      expect(sample(text, 'codecall_sandbox_destroy_seconds_count')).toBeGreaterThanOrEqual(3);
      expect(sample(text, 'codecall_sandbox_create_seconds_sum')).toBeGreaterThan(0);
    });
  });

  it('times tool calls by tool and outcome; timers are not tools', async () => {
    const id = await submit(
      `await tools.pay({}); await tools.pay({}); await new Promise((r) => setTimeout(r, 1));
       try { await tools.boom({}); } catch {} return 'ok';`,
    );
    await until(id, (s) => s === 'succeeded');
    await eventually((text) => {
      expect(sample(text, 'codecall_tool_call_seconds_count', { tool: 'tools.pay', outcome: 'ok' })).toBe(2);
      expect(sample(text, 'codecall_tool_call_seconds_count', { tool: 'tools.boom', outcome: 'error' })).toBe(
        1,
      );
      expect(text).not.toContain('tool="timer"');
    });
  });

  it("counts a failed task's error code, and HTTP errors by their envelope's code", async () => {
    const id = await submit("throw new Error('bad');");
    const failed = await until(id, (s) => s === 'failed');
    const code = (failed.error as { code: string }).code;
    await eventually((text) => {
      expect(sample(text, 'codecall_errors_total', { source: 'task', code })).toBe(1);
      expect(sample(text, 'codecall_task_duration_seconds_count', { status: 'failed' })).toBe(1);
    });

    expect((await app.inject({ url: '/api/v1/tasks/task_nope' })).statusCode).toBe(404);
    expect((await app.inject({ url: '/api/v1/tasks/task_nope' })).statusCode).toBe(404);
    expect(
      (await app.inject({ method: 'POST', url: '/api/v1/tasks', payload: { code: 1 } })).statusCode,
    ).toBe(400);
    expect((await app.inject({ url: '/nowhere' })).statusCode).toBe(404);
    const text = await scrape();
    expect(sample(text, 'codecall_errors_total', { source: 'http', code: 'NOT_FOUND' })).toBe(3);
    expect(sample(text, 'codecall_errors_total', { source: 'http', code: 'BAD_REQUEST' })).toBe(1);
    const get404 = { route: '/api/v1/tasks/:id', method: 'GET', status_code: '404' };
    expect(sample(text, 'codecall_http_requests_total', get404)).toBe(2);
    expect(sample(text, 'codecall_http_request_duration_seconds_count', get404)).toBe(2);
    expect(
      sample(text, 'codecall_http_requests_total', { route: 'unmatched', method: 'GET', status_code: '404' }),
    ).toBe(1);
  });

  it('counts the calls a revision took over, and does not time them as calls', async () => {
    const first = await submit(
      `await tools.pay({ n: 1 }); await tools.pay({ n: 2 }); throw new Error('typo');`,
    );
    await until(first, (s) => s === 'failed');
    const before = sample(await scrape(), 'codecall_tool_call_seconds_count', {
      tool: 'tools.pay',
      outcome: 'ok',
    });
    const res = await app.inject({
      method: 'POST',
      url: `/api/v1/tasks/${first}/revise`,
      payload: {
        code: `await tools.pay({ n: 1 }); await tools.pay({ n: 2 }); await tools.pay({ n: 3 }); return 1;`,
      },
    });
    expect(res.statusCode, res.body).toBe(201);
    await until(res.json<{ task_id: string }>().task_id, (s) => s === 'succeeded');
    await eventually((text) => {
      expect(sample(text, 'codecall_tool_calls_carried_total', { tool: 'tools.pay' })).toBe(2);
      expect(sample(text, 'codecall_tool_call_seconds_count', { tool: 'tools.pay', outcome: 'ok' })).toBe(
        before + 1,
      );
    });
  });

  it('measures pause latency (asked -> paused) and resume latency (asked -> running again)', async () => {
    const id = await submit('for (;;) {}');
    await until(id, (s) => s === 'running');
    const control = (action: string) =>
      app.inject({ method: 'POST', url: `/api/v1/tasks/${id}/control`, payload: { action } });
    expect((await control('pause')).json()).toMatchObject({ status: 'paused', pause_reason: 'user_request' });
    expect((await control('pause')).statusCode).toBe(409); // refused: not counted, and forgotten
    let text = await scrape();
    expect(sample(text, 'codecall_pause_latency_seconds_count')).toBe(1);
    expect(sample(text, 'codecall_resume_latency_seconds_count')).toBe(0);

    expect((await control('resume')).statusCode).toBe(200);
    await until(id, (s) => s === 'running');
    text = await scrape();
    expect(sample(text, 'codecall_resume_latency_seconds_count')).toBe(1);
    expect(sample(text, 'codecall_resume_latency_seconds_sum')).toBeGreaterThan(0);

    expect((await control('cancel')).json()).toMatchObject({ status: 'cancelled' });
    await eventually((t) =>
      expect(sample(t, 'codecall_task_duration_seconds_count', { status: 'cancelled' })).toBe(1),
    );
    text = await scrape();
    expect(sample(text, 'codecall_pause_latency_seconds_count')).toBe(1);
    // A cancelled task is not an error.
    expect(sample(text, 'codecall_errors_total', { source: 'task', code: 'CANCELLED' })).toBe(0);
  });

  it('exports model token counters by kind, fed by addModelTokens (the agent layer)', async () => {
    const before = await scrape();
    expect(sample(before, 'codecall_model_tokens_total', { kind: 'prompt' })).toBe(0);
    expect(before).toContain('codecall_model_tokens_total{kind="completion"} 0');
    metrics.addModelTokens('prompt', 120);
    metrics.addModelTokens('completion', 30);
    metrics.addModelTokens('completion', -5); // ignored: a counter only goes up
    const after = await scrape();
    expect(sample(after, 'codecall_model_tokens_total', { kind: 'prompt' })).toBe(120);
    expect(sample(after, 'codecall_model_tokens_total', { kind: 'completion' })).toBe(30);
  });
});
