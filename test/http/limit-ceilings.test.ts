import Database from 'better-sqlite3';
import { beforeAll, describe, expect, it } from 'vitest';
import { countTasks, useApiFixture } from './api-fixture.ts';
import type { ApiKey, ErrorBody } from './api-fixture.ts';

// ADR 0023: what a task may ask for is bounded by the operator's ceilings (refused, never clamped, naming the
// field and the ceiling), and one tenant's flood does not starve another tenant's task.

const CEILINGS = {
  maxTimeoutSeconds: 60,
  maxCpuSeconds: 30,
  maxMemoryMb: 256,
  maxPriority: 10,
  maxDeadlineSeconds: 3600,
  maxRetries: 2,
};

describe('HTTP limit ceilings', () => {
  const fx = useApiFixture('http-ceilings', { start: false, runtime: { ceilings: CEILINGS } });
  let key: ApiKey;
  beforeAll(async () => {
    key = await fx.key('tenant-a');
  });
  const post = (url: string, payload: unknown) =>
    fx.app.inject({
      method: 'POST',
      url,
      headers: { ...key.headers, 'content-type': 'application/json' },
      payload: JSON.stringify(payload),
    });

  const cases: [string, Record<string, unknown>, number][] = [
    ['tool_constraints.timeout_seconds', { tool_constraints: { timeout_seconds: 61 } }, 60],
    ['tool_constraints.cpu_seconds', { tool_constraints: { cpu_seconds: 31 } }, 30],
    ['tool_constraints.max_memory_mb', { tool_constraints: { max_memory_mb: 1e6 } }, 256],
    ['priority', { priority: 11 }, 10],
    ['deadline_seconds', { deadline_seconds: 7200 }, 3600],
    // Just past the ceiling: no slack for the time between the HTTP layer and the runtime.
    ['deadline_seconds', { deadline_seconds: 3601 }, 3600],
    ['deadline_seconds', { deadline_seconds: 3600.001 }, 3600],
    ['tool_constraints.timeout_seconds', { tool_constraints: { timeout_seconds: 60.001 } }, 60],
    ['max_retries', { max_retries: 3 }, 2],
  ];

  it.each(cases)(
    'refuses %s above its ceiling with INVALID_ARGUMENT naming both',
    async (field, extra, ceiling) => {
      const before = await countTasks(fx.store);
      const res = await post('/api/v1/tasks', { code: '1', ...extra });
      expect(res.statusCode).toBe(400);
      const body = res.json<ErrorBody>();
      expect(body.error.code).toBe('INVALID_ARGUMENT');
      expect(body.error.details).toMatchObject({ field, ceiling });
      expect(await countTasks(fx.store)).toBe(before);
    },
  );

  it('accepts a task at its ceilings', async () => {
    const res = await post('/api/v1/tasks', {
      code: '1',
      priority: 10,
      max_retries: 2,
      deadline_seconds: 3600,
      tool_constraints: { timeout_seconds: 60, cpu_seconds: 30, max_memory_mb: 256 },
    });
    expect(res.statusCode).toBe(201);
  });

  it('refuses a batch whose task i is above a ceiling, naming tasks[i]', async () => {
    const before = await countTasks(fx.store);
    const res = await post('/api/v1/tasks/batch', {
      tasks: [{ code: '1' }, { code: '2', tool_constraints: { max_memory_mb: 2048 } }],
    });
    expect(res.statusCode).toBe(400);
    expect(res.json<ErrorBody>().error.details).toMatchObject({
      field: 'tasks[1].tool_constraints.max_memory_mb',
      ceiling: 256,
    });
    expect(await countTasks(fx.store)).toBe(before);
  });

  it('applies to instruction (agent) tasks too', async () => {
    const res = await post('/api/v1/tasks', { instruction: 'do it', priority: 50 });
    expect(res.statusCode).toBe(400);
    expect(res.json<ErrorBody>().error.details).toMatchObject({ field: 'priority', ceiling: 10 });
  });
});

describe('HTTP fair share between tenants', () => {
  const fx = useApiFixture('http-fair', { runtime: { concurrency: 1 } });
  it("runs tenant B's task while tenant A's flood at priority 100 is still queued", async () => {
    const a = await fx.key('tenant-a');
    const b = await fx.key('tenant-b');
    const send = (k: ApiKey, url: string, payload: unknown) =>
      fx.app.inject({
        method: 'POST',
        url,
        headers: { ...k.headers, 'content-type': 'application/json' },
        payload: JSON.stringify(payload),
      });
    const flood = await send(a, '/api/v1/tasks/batch', {
      tasks: Array.from({ length: 200 }, (_, i) => ({ code: `${i}`, priority: 100 })),
    });
    expect(flood.statusCode).toBe(201);
    const mine = await send(b, '/api/v1/tasks', { code: '"b done"', priority: 0 });
    expect(mine.statusCode).toBe(201);
    const id = mine.json<{ task_id: string }>().task_id;
    let status = '';
    for (let i = 0; i < 600 && status !== 'succeeded'; i++) {
      const view = await fx.app.inject({ url: `/api/v1/tasks/${id}`, headers: b.headers });
      status = view.json<{ status: string }>().status;
      if (status !== 'succeeded') await new Promise((r) => setTimeout(r, 50));
    }
    expect(status).toBe('succeeded');
    const db = new Database(fx.path, { readonly: true });
    const rows = db
      .prepare("SELECT count(*) AS n FROM tasks WHERE tenant = 'tenant-a' AND status = 'pending'")
      .get() as { n: number };
    db.close();
    // One slot taken in turns: B waited for at most a few of A's tasks, far from all 200.
    expect(rows.n).toBeGreaterThan(150);
  });
});
