import { describe, expect, it } from 'vitest';
import { countTasks, useApiFixture } from './api-fixture.ts';
import type { ErrorBody } from './api-fixture.ts';

// A tenant holds at most maxLiveTasksPerTenant tasks that have not ended: a queue flood is refused 429
// TOO_MANY_TASKS on every path that creates tasks (submit, batch counted whole, revision), stores nothing, and
// leaves other tenants be; a task that ends (here: cancelled) frees its place.

describe('live tasks per tenant', () => {
  const fx = useApiFixture('http-live-task-cap', {
    start: false,
    runtime: { ceilings: { maxLiveTasksPerTenant: 3 } },
  });
  const submit = async (headers: Record<string, string>, code = 'return 1') =>
    fx.app.inject({ method: 'POST', url: '/api/v1/tasks', headers, payload: { code } });

  it('refuses the task over the cap on each path, and frees a place when a task ends', async () => {
    const b = await fx.key('t-cap-b');
    const a = await fx.key('t-cap-a');
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await submit(b.headers);
      expect(res.statusCode).toBe(201);
      ids.push(res.json<{ task_id: string }>().task_id);
    }
    const before = await countTasks(fx.store);
    const over = await submit(b.headers);
    expect(over.statusCode).toBe(429);
    const body = over.json<ErrorBody>();
    expect(body.error.code).toBe('TOO_MANY_TASKS');
    expect(body.error.details).toMatchObject({ tenant: 't-cap-b', live: 3, cap: 3 });
    expect(body.error.message).toMatch(/cancel some/);
    const batch = await fx.app.inject({
      method: 'POST',
      url: '/api/v1/tasks/batch',
      headers: b.headers,
      payload: { tasks: [{ code: 'return 1' }] },
    });
    expect(batch.statusCode).toBe(429);
    expect(batch.json<ErrorBody>().error.code).toBe('TOO_MANY_TASKS');
    expect(await countTasks(fx.store)).toBe(before);
    // Another tenant is not held by b's cap.
    expect((await submit(a.headers)).statusCode).toBe(201);
    // A batch that would go over counts whole: two into a tenant with one place left.
    const cancel = await fx.app.inject({
      method: 'POST',
      url: `/api/v1/tasks/${ids[0]}/control`,
      headers: b.headers,
      payload: { action: 'cancel' },
    });
    expect(cancel.statusCode).toBeLessThan(300);
    const two = await fx.app.inject({
      method: 'POST',
      url: '/api/v1/tasks/batch',
      headers: b.headers,
      payload: { tasks: [{ code: 'return 1' }, { code: 'return 2' }] },
    });
    expect(two.statusCode).toBe(429);
    expect(two.json<ErrorBody>().error.details).toMatchObject({ live: 2, adding: 2, cap: 3 });
    // The cancelled task's revision takes the freed place; the next one is over again.
    const revise = (id: string) =>
      fx.app.inject({
        method: 'POST',
        url: `/api/v1/tasks/${id}/revise`,
        headers: b.headers,
        payload: { code: 'return 3' },
      });
    expect((await revise(String(ids[0]))).statusCode).toBe(201);
    const again = await revise(String(ids[0]));
    expect(again.statusCode).toBe(429);
    expect(again.json<ErrorBody>().error.code).toBe('TOO_MANY_TASKS');
  });
});
