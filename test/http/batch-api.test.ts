import { beforeAll, describe, expect, it } from 'vitest';
import { countTasks, useApiFixture } from './api-fixture.ts';
import type { ApiKey, ErrorBody } from './api-fixture.ts';

// POST /api/v1/tasks/batch and GET /api/v1/batches/{id} over the real runtime: a batch is accepted whole or
// not at all, its tasks run on their own, and its counts follow them.

interface BatchView {
  batch_id: string;
  tenant: string;
  size: number;
  counts: Record<string, number>;
  task_ids: string[];
  completed_at: string | null;
}

describe('HTTP batches', () => {
  const fx = useApiFixture('http-batch');
  let key: ApiKey;

  beforeAll(async () => {
    key = await fx.key('tenant-a');
  });

  const post = (payload: unknown) =>
    fx.app.inject({
      method: 'POST',
      url: '/api/v1/tasks/batch',
      headers: { ...key.headers, 'content-type': 'application/json' },
      payload: JSON.stringify(payload),
    });
  const get = (url: string) => fx.app.inject({ url, headers: key.headers });
  const taskCount = () => countTasks(fx.store);
  async function refused(payload: unknown, status: number, code: string, field?: string) {
    const before = await taskCount();
    const res = await post(payload);
    expect(res.statusCode, res.body).toBe(status);
    const body = res.json<ErrorBody>();
    expect(body.error.code).toBe(code);
    if (field !== undefined) {
      expect(body.error.details.field).toBe(field);
      expect(body.error.message.startsWith(`${field}:`) || body.error.message.startsWith(`${field} `)).toBe(
        true,
      );
    }
    // Nothing of the batch was stored.
    expect(await taskCount()).toBe(before);
    return body;
  }

  it('accepts 20 tasks (201), runs each, and its counts converge with task_ids in order', async () => {
    const tasks = Array.from({ length: 20 }, (_, i) =>
      i % 3 === 0 ? { code: `throw new Error('x${i}')` } : { code: `return ${i}`, metadata: { i } },
    );
    const res = await post({ tasks });
    expect(res.statusCode, res.body).toBe(201);
    const created = res.json<{ batch_id: string; task_ids: string[]; created_at: string }>();
    expect(created.batch_id).toMatch(/^batch_/);
    expect(created.task_ids).toHaveLength(20);
    expect(new Set(created.task_ids).size).toBe(20);
    let batch: BatchView | undefined;
    for (let i = 0; i < 1000; i++) {
      batch = (await get(`/api/v1/batches/${created.batch_id}`)).json<BatchView>();
      if (batch.counts.succeeded! + batch.counts.failed! === 20) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(batch).toMatchObject({
      batch_id: created.batch_id,
      tenant: 'tenant-a',
      size: 20,
      counts: { pending: 0, running: 0, paused: 0, succeeded: 13, failed: 7, cancelled: 0 },
      task_ids: created.task_ids,
    });
    // In submission order: task i ran program i.
    for (const [i, id] of created.task_ids.entries()) {
      const view = (await get(`/api/v1/tasks/${id}`)).json<Record<string, unknown>>();
      expect(view).toMatchObject({ batch_id: created.batch_id, tenant: 'tenant-a' });
      if (i % 3 === 0) expect(view).toMatchObject({ status: 'failed', error: { code: 'GUEST_ERROR' } });
      else expect(view).toMatchObject({ status: 'succeeded', result: { output: i }, metadata: { i } });
    }
    const listed = (await get(`/api/v1/tasks?limit=1000`)).json<{ tasks: { task_id: string }[] }>().tasks;
    expect(listed.map((t) => t.task_id)).toEqual(expect.arrayContaining(created.task_ids));
  });

  it('refuses a batch with one invalid task, naming it (400), and stores none of it', async () => {
    const ok = { code: 'return 1' };
    const tasks = (i: number, bad: object) => Array.from({ length: 8 }, (_, j) => (j === i ? bad : ok));
    await refused(
      { tasks: tasks(3, { code: 'return 1', language: 'cobol' }) },
      400,
      'BAD_REQUEST',
      'tasks[3].language',
    );
    await refused({ tasks: tasks(5, { language: 'javascript' }) }, 400, 'BAD_REQUEST', 'tasks[5].code');
    await refused(
      { tasks: tasks(2, { code: 'return 1', priority: 1000 }) },
      400,
      'BAD_REQUEST',
      'tasks[2].priority',
    );
    await refused(
      { tasks: tasks(4, { code: 'return 1', colour: 'red' }) },
      400,
      'BAD_REQUEST',
      'tasks[4].colour',
    );
    await refused(
      { tasks: tasks(6, { code: 'return 1', tools: ['a', 7] }) },
      400,
      'BAD_REQUEST',
      'tasks[6].tools[1]',
    );
    await refused(
      { tasks: tasks(7, { code: 'return 1', seed: 2 ** 40 }) },
      400,
      'INVALID_ARGUMENT',
      'tasks[7].seed',
    );
    await refused(
      { tasks: tasks(1, { code: 'return 1', tool_constraints: { network_access: true } }) },
      400,
      'INVALID_ARGUMENT',
      'tasks[1].tool_constraints.network_access',
    );
    await refused({ tasks: [] }, 400, 'BAD_REQUEST', 'tasks');
    await refused({}, 400, 'BAD_REQUEST', 'tasks');
    await refused({ tasks: ok }, 400, 'BAD_REQUEST', 'tasks');
  });

  it('refuses more than 1,000 tasks', async () => {
    await refused(
      { tasks: Array.from({ length: 1001 }, () => ({ code: 'return 1' })) },
      400,
      'BAD_REQUEST',
      'tasks',
    );
  });

  it('refuses callback URLs when no webhook secret is configured (the default policy)', async () => {
    await refused(
      { tasks: [{ code: 'return 1' }], callback_url: 'https://example.com/hook' },
      400,
      'WEBHOOK_TARGET_REFUSED',
      'callback_url',
    );
    await refused(
      { tasks: [{ code: 'return 1' }, { code: 'return 2', callback_url: 'https://example.com/hook' }] },
      400,
      'WEBHOOK_TARGET_REFUSED',
      'tasks[1].callback_url',
    );
    const single = await fx.app.inject({
      method: 'POST',
      url: '/api/v1/tasks',
      headers: key.headers,
      payload: { code: 'return 1', callback_url: 'https://example.com/hook' },
    });
    expect(single.statusCode).toBe(400);
    expect(single.json<ErrorBody>().error).toMatchObject({
      code: 'WEBHOOK_TARGET_REFUSED',
      details: { field: 'callback_url' },
    });
  });

  it.each([
    ['javascript', 'return 1'],
    ['typescript', 'return 1'],
    ['python', 'print(1)'],
  ])('refuses network_access for %s, naming tool_constraints.network_access', async (language, code) => {
    const before = await taskCount();
    const res = await fx.app.inject({
      method: 'POST',
      url: '/api/v1/tasks',
      headers: key.headers,
      payload: { code, language, tool_constraints: { network_access: true } },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json<ErrorBody>().error).toMatchObject({
      code: 'INVALID_ARGUMENT',
      details: { field: 'tool_constraints.network_access' },
    });
    expect(await taskCount()).toBe(before);
  });

  it.each(['javascript', 'typescript'])(
    'refuses allow_subprocesses for %s (quickjs starts none), naming the field',
    async (language) => {
      const before = await taskCount();
      const res = await fx.app.inject({
        method: 'POST',
        url: '/api/v1/tasks',
        headers: key.headers,
        payload: { code: 'return 1', language, tool_constraints: { allow_subprocesses: true } },
      });
      expect(res.statusCode).toBe(400);
      expect(res.json<ErrorBody>().error).toMatchObject({
        code: 'INVALID_ARGUMENT',
        details: { field: 'tool_constraints.allow_subprocesses' },
      });
      expect(await taskCount()).toBe(before);
    },
  );

  it('shows priority, max_retries, deadline, session_id, batch_id and tenant in the task view', async () => {
    const started = Date.now();
    const res = await post({
      tasks: [
        { code: 'return 1', priority: 7, max_retries: 3, deadline_seconds: 3600, session_id: 'chat-9' },
        { code: 'return 2' },
      ],
    });
    expect(res.statusCode, res.body).toBe(201);
    const { batch_id, task_ids } = res.json<{ batch_id: string; task_ids: string[] }>();
    const first = (await get(`/api/v1/tasks/${task_ids[0]!}`)).json<Record<string, unknown>>();
    expect(first).toMatchObject({
      priority: 7,
      max_retries: 3,
      session_id: 'chat-9',
      batch_id,
      tenant: 'tenant-a',
    });
    const deadline = Date.parse(String(first.deadline));
    expect(deadline).toBeGreaterThanOrEqual(started + 3600_000);
    expect(deadline).toBeLessThanOrEqual(Date.now() + 3600_000);
    expect((await get(`/api/v1/tasks/${task_ids[1]!}`)).json()).toMatchObject({
      priority: 0,
      max_retries: 0,
      deadline: null,
      session_id: null,
      batch_id,
      tenant: 'tenant-a',
    });
    // The same fields on a single task.
    const single = await fx.app.inject({
      method: 'POST',
      url: '/api/v1/tasks',
      headers: key.headers,
      payload: { code: 'return 1', priority: -5, max_retries: 10, deadline_seconds: 60, session_id: 's.1' },
    });
    const view = (await get(`/api/v1/tasks/${single.json<{ task_id: string }>().task_id}`)).json<
      Record<string, unknown>
    >();
    expect(view).toMatchObject({ priority: -5, max_retries: 10, session_id: 's.1', batch_id: null });
    expect((await get('/api/v1/tasks?session_id=chat-9')).json<{ tasks: unknown[] }>().tasks).toHaveLength(1);
  });

  it('runs a task whose deadline is further away than a timer reaches (2^31 ms) to its end', async () => {
    // Regression: the deadline timer overflowed and fired at once, failing the task with DEADLINE_EXCEEDED.
    const res = await post({ tasks: [{ code: 'return 1', deadline_seconds: 31_536_000 }] });
    const [id] = res.json<{ task_ids: string[] }>().task_ids;
    const view = await fx.runtime.wait(id!, { until: 'terminal' });
    expect(view).toMatchObject({ status: 'succeeded', error: null });
  });

  it('answers an unknown batch with 404', async () => {
    const res = await get('/api/v1/batches/batch_nope');
    expect(res.statusCode).toBe(404);
    expect(res.json<ErrorBody>().error).toMatchObject({
      code: 'NOT_FOUND',
      details: { batch_id: 'batch_nope' },
    });
  });
});
