import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/durable/index.ts';
import { buildServer } from '../../src/http/index.ts';
import { ToolRegistry } from '../../src/index.ts';
import { payTool } from './api-fixture.ts';
import { useDurableFixture } from '../durable/fixture.ts';
import type { Runtime } from '../../src/api/index.ts';

// The /api/v1 task endpoints over a real runtime (SQLite file, quickjs driver), through fastify's inject.

describe('HTTP task API', () => {
  const fx = useDurableFixture('http');
  let runtime: Runtime;
  let app: ReturnType<typeof buildServer>;

  beforeAll(async () => {
    const tools = new ToolRegistry([payTool()]);
    runtime = createRuntime({ store: fx.store, drivers: [fx.driver], tools, pollMs: 20 });
    runtime.start();
    app = buildServer({ runtime, store: fx.store, bodyLimit: 64 * 1024 });
    await app.ready();
  });
  afterAll(async () => {
    await app.close();
    await runtime.close();
  });

  const post = (url: string, payload: unknown) =>
    app.inject({ method: 'POST', url, payload: payload as object });
  async function until(id: string, status: string): Promise<Record<string, unknown>> {
    for (let i = 0; i < 500; i++) {
      const view = (await app.inject({ url: `/api/v1/tasks/${id}` })).json<Record<string, unknown>>();
      if (view.status === status) return view;
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error(`task ${id} never became ${status}`);
  }

  it('creates a task (201), runs it, and shows the task view', async () => {
    const res = await post('/api/v1/tasks', {
      code: 'return await tools.pay({ amount: 5 });',
      tool_constraints: { timeout_seconds: 10 },
      metadata: { team: 'a' },
    });
    expect(res.statusCode).toBe(201);
    const created = res.json<{ task_id: string; status: string; created_at: string }>();
    expect(created).toMatchObject({ status: 'pending' });
    const done = await until(created.task_id, 'succeeded');
    expect(done).toMatchObject({ result: { output: 'paid 5' }, metadata: { team: 'a' }, error: null });
    const list = (await app.inject({ url: '/api/v1/tasks?status=succeeded' })).json<{ tasks: unknown[] }>();
    expect(list.tasks.length).toBeGreaterThan(0);
    await post('/api/v1/tasks', { code: 'return 2' });
    const page = (await app.inject({ url: '/api/v1/tasks?limit=1' })).json<{
      tasks: unknown[];
      next_cursor: string;
    }>();
    expect(page.tasks).toHaveLength(1);
    const next = await app.inject({
      url: `/api/v1/tasks?limit=1&cursor=${encodeURIComponent(page.next_cursor)}`,
    });
    expect(next.json<{ tasks: { task_id: string }[] }>().tasks[0]?.task_id).not.toBe(created.task_id);
    expect((await app.inject({ url: '/api/v1/tasks?limit=5000' })).statusCode).toBe(400);
    // Newest first: the task made last leads; an order the API does not know is a 400 naming the field.
    const newest = (await app.inject({ url: '/api/v1/tasks?order=newest&limit=1' })).json<{
      tasks: { task_id: string; created_at: string }[];
    }>();
    const all = (await app.inject({ url: '/api/v1/tasks?limit=1000' })).json<{
      tasks: { task_id: string }[];
    }>();
    expect(newest.tasks[0]?.task_id).toBe(all.tasks.at(-1)?.task_id);
    expect((await app.inject({ url: '/api/v1/tasks?order=sideways' })).statusCode).toBe(400);
  });

  it('tool_constraints.cpu_seconds bounds the computing, not the waiting: CPU_LIMIT', async () => {
    const busy = await post('/api/v1/tasks', {
      code: 'while (true) {}',
      tool_constraints: { timeout_seconds: 30, cpu_seconds: 0.2 },
    });
    expect(busy.statusCode).toBe(201);
    const failed = await until(busy.json<{ task_id: string }>().task_id, 'failed');
    expect(failed).toMatchObject({ error: { code: 'CPU_LIMIT' } });
    const waiting = await post('/api/v1/tasks', {
      code: 'await new Promise((r) => setTimeout(r, 400)); return "waited";',
      tool_constraints: { cpu_seconds: 0.2 },
    });
    const done = await until(waiting.json<{ task_id: string }>().task_id, 'succeeded');
    expect(done).toMatchObject({ result: { output: 'waited' } });
    const refused = await post('/api/v1/tasks', { code: 'return 1', tool_constraints: { cpu_seconds: 0 } });
    expect(refused.statusCode).toBe(400);
    expect(refused.json<{ error: { details: unknown } }>().error.details).toEqual({
      field: 'tool_constraints.cpu_seconds',
    });
  });

  it('pauses for approval, takes the decision by id, and succeeds', async () => {
    const { task_id } = (
      await post('/api/v1/tasks', { code: 'return await tools.pay({ amount: 500 });' })
    ).json<{
      task_id: string;
    }>();
    const paused = await until(task_id, 'paused');
    expect(paused).toMatchObject({
      pause_reason: 'approval_required',
      pending_approvals: [{ tool: 'tools.pay', arguments: { amount: 500 } }],
    });
    const approvalId = (paused.pending_approvals as { id: string }[])[0]!.id;
    const wrong = await post(`/api/v1/tasks/${task_id}/approvals/nope`, { decision: 'approve' });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.json()).toMatchObject({ error: { code: 'INVALID_ARGUMENT' } });
    const ok = await post(`/api/v1/tasks/${task_id}/approvals/${approvalId}`, {
      decision: 'approve',
      reason: 'ok',
    });
    expect(ok.statusCode).toBe(200);
    expect(await until(task_id, 'succeeded')).toMatchObject({ result: { output: 'paid 500' } });
    type Page = {
      events: { source: string; seq: number; type: string; data: Record<string, unknown> }[];
      next_after: string | null;
    };
    const all = (await app.inject({ url: `/api/v1/tasks/${task_id}/events` })).json<Page>().events;
    const journal = all.filter((e) => e.source === 'journal');
    expect(journal.map((e) => e.seq)).toEqual(journal.map((_, i) => i + 1));
    expect(journal.find((e) => e.type === 'approval_decision')?.data).toMatchObject({
      actor: 'anonymous',
      decision: 'approve',
      reason: 'ok',
    });
    // The audit log interleaves: created, then each status change right after the journal entry it followed.
    const audit = all.filter((e) => e.source === 'audit');
    expect(audit.map((e) => e.type === 'status' && `${String(e.data.from)}>${String(e.data.to)}`)).toEqual([
      false,
      'pending>running',
      'running>paused',
      'paused>pending',
      'pending>running',
      'running>succeeded',
    ]);
    expect(audit.find((e) => e.data.to === 'pending')?.data).toMatchObject({ actor: 'anonymous' });
    // Pages of two, following next_after, give the same list.
    const paged: Page['events'] = [];
    for (let after = '0-0'; ;) {
      const page = (
        await app.inject({ url: `/api/v1/tasks/${task_id}/events?after=${after}&limit=2` })
      ).json<Page>();
      paged.push(...page.events);
      if (page.next_after === null) break;
      after = page.next_after;
    }
    expect(paged).toEqual(all);
    expect((await app.inject({ url: '/api/v1/tasks/task_nope/events' })).statusCode).toBe(404);
  });

  it('takes input and control actions; an illegal transition is 409 with the current status', async () => {
    const { task_id } = (
      await post('/api/v1/tasks', { code: "return 'hi ' + (await input.wait('who')).name;" })
    ).json<{ task_id: string }>();
    await until(task_id, 'paused');
    const resume = await post(`/api/v1/tasks/${task_id}/control`, { action: 'resume' });
    expect(resume.statusCode).toBe(409);
    expect(resume.json()).toMatchObject({
      error: { code: 'ILLEGAL_TRANSITION', details: { status: 'paused' } },
    });
    const nan = await app.inject({
      method: 'POST',
      url: `/api/v1/tasks/${task_id}/input`,
      headers: { 'content-type': 'application/json' },
      payload: '{"name":"who"}',
    });
    expect(nan.statusCode).toBe(400);
    expect(nan.json()).toMatchObject({ error: { code: 'BAD_REQUEST', details: { field: 'value' } } });
    expect(
      (await post(`/api/v1/tasks/${task_id}/input`, { name: 'who', value: { name: 'Ada' } })).statusCode,
    ).toBe(200);
    expect(await until(task_id, 'succeeded')).toMatchObject({ result: { output: 'hi Ada' } });
    const cancel = await post(`/api/v1/tasks/${task_id}/control`, { action: 'cancel' });
    expect(cancel.statusCode).toBe(409);
    expect(cancel.json()).toMatchObject({ error: { details: { status: 'succeeded' } } });
  });

  it('honours Idempotency-Key: same key and body -> the same response; another body -> 422', async () => {
    const send = (key: string, code: string) =>
      app.inject({
        method: 'POST',
        url: '/api/v1/tasks',
        headers: { 'idempotency-key': key },
        payload: { code },
      });
    const first = await send('order-7', 'return 7');
    const again = await send('order-7', 'return 7');
    expect(first.statusCode).toBe(201);
    expect(again.statusCode).toBe(201);
    expect(again.json()).toEqual(first.json());
    const conflict = await send('order-7', 'return 8');
    expect(conflict.statusCode).toBe(422);
    expect(conflict.json()).toMatchObject({ error: { code: 'IDEMPOTENCY_CONFLICT' } });
    const tooLong = await send('k'.repeat(300), 'return 7');
    expect(tooLong.statusCode).toBe(400);
  });

  it('answers bad input with a coded error, never a 500', async () => {
    const cases: [string, number, string, string?][] = [
      ['{"code": 1}', 400, 'BAD_REQUEST', 'code'],
      ['{}', 400, 'BAD_REQUEST', 'code'],
      ['{"code": "return 1", "extra": true}', 400, 'BAD_REQUEST'],
      ['{"code": "return 1", "language": "cobol"}', 400, 'BAD_REQUEST', 'language'],
      ['{"code": "return 1", "tool_constraints": {"timeout_seconds": -1}}', 400, 'BAD_REQUEST'],
      ['{"code": ', 400, 'BAD_REQUEST'],
      [`{"code": "${'x'.repeat(70 * 1024)}"}`, 413, 'PAYLOAD_TOO_LARGE'],
    ];
    for (const [payload, status, code, field] of cases) {
      const res = await app.inject({
        method: 'POST',
        url: '/api/v1/tasks',
        headers: { 'content-type': 'application/json' },
        payload,
      });
      expect(res.statusCode, payload.slice(0, 60)).toBe(status);
      const body = res.json<{ error: { code: string; message: string; details: { field?: string } } }>();
      expect(body.error.code).toBe(code);
      expect(typeof body.error.message).toBe('string');
      if (field) expect(body.error.details.field).toBe(field);
    }
    const missing = await app.inject({ url: '/api/v1/tasks/task_nope' });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toMatchObject({ error: { code: 'NOT_FOUND' } });
    const noRoute = await app.inject({ url: '/api/v1/nothing' });
    expect(noRoute.statusCode).toBe(404);
    const badQuery = await app.inject({ url: '/api/v1/tasks?status=sleeping' });
    expect(badQuery.statusCode).toBe(400);
    expect((await app.inject({ url: '/healthz' })).json()).toEqual({ status: 'ok' });
  });
});
