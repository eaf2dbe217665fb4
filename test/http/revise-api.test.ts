import { beforeAll, describe, expect, it } from 'vitest';
import { createClient, defineTool } from '../../src/index.ts';
import type { StreamEvent } from '../../src/client/index.ts';
import type { TaskView } from '../../src/api/index.ts';
import { until } from '../durable/fixture.ts';
import { countTasks, useApiFixture } from './api-fixture.ts';
import type { ApiKey, ErrorBody } from './api-fixture.ts';

// Fix and continue over HTTP (issue 18, ADR 0034): POST /api/v1/tasks/{id}/revise makes a new task that runs the
// fixed program of an ended code task; the calls that task completed are taken over, not run again. A real
// server on loopback, real SQLite, the quickjs sandbox; the tools keep a ledger of what really ran.

const ledger: { tool: string; args: unknown }[] = [];
const ran = (tool: string) => ledger.filter((l) => l.tool === tool).map((l) => l.args);

const tools = [
  defineTool({
    name: 'pay',
    description: 'pays (unsafe)',
    effect: 'unsafe',
    execute: (a) => {
      ledger.push({ tool: 'pay', args: a });
      return { receipt: `r${ledger.length}` };
    },
  }),
  defineTool({
    name: 'balance',
    description: 'reads a balance',
    effect: 'read',
    execute: (a) => {
      ledger.push({ tool: 'balance', args: a });
      return 100;
    },
  }),
];

const FAILS_AFTER_THREE = `
  const a = await tools.pay({ to: 'a', amount: 10 });
  const b = await tools.balance({ account: 'main' });
  const c = await tools.pay({ to: 'b', amount: 20 });
  return totl + 1;`;

type Event = { source: string; seq: number; type: string; data: Record<string, unknown> };

describe('POST /api/v1/tasks/{id}/revise', () => {
  const fx = useApiFixture('http-revise', { tools });
  let a: ApiKey;
  let b: ApiKey;
  let url: string;

  beforeAll(async () => {
    a = await fx.key('tenant-a');
    b = await fx.key('tenant-b');
    url = await fx.app.listen({ port: 0, host: '127.0.0.1' });
  });

  const http = (
    method: string,
    path: string,
    key: ApiKey,
    body?: unknown,
    headers: Record<string, string> = {},
  ) =>
    fetch(`${url}${path}`, {
      method,
      headers: {
        ...key.headers,
        ...headers,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  async function view(id: string, key: ApiKey = a): Promise<TaskView> {
    return (await (await http('GET', `/api/v1/tasks/${id}`, key)).json()) as TaskView;
  }
  async function settled(id: string, key: ApiKey = a): Promise<TaskView> {
    let v: TaskView | null = null;
    await until(async () => {
      v = await view(id, key);
      return v.status !== 'pending' && v.status !== 'running';
    }, 10_000);
    return v as unknown as TaskView;
  }
  async function submit(code: string, key: ApiKey = a): Promise<string> {
    const res = await http('POST', '/api/v1/tasks', key, { code, seed: 7 });
    expect(res.status).toBe(201);
    return ((await res.json()) as { task_id: string }).task_id;
  }
  async function revise(id: string, body: unknown, key: ApiKey = a, headers: Record<string, string> = {}) {
    const res = await http('POST', `/api/v1/tasks/${id}/revise`, key, body, headers);
    return { status: res.status, body: (await res.json()) as TaskView & ErrorBody };
  }
  async function events(id: string): Promise<Event[]> {
    const res = await http('GET', `/api/v1/tasks/${id}/events?limit=1000`, a);
    return ((await res.json()) as { events: Event[] }).events;
  }

  it('a task that failed after three calls, revised: nothing runs twice, the view counts and names what it did', async () => {
    ledger.length = 0;
    const first = await submit(FAILS_AFTER_THREE);
    expect(await settled(first)).toMatchObject({ status: 'failed', error: { code: 'GUEST_ERROR' } });
    expect(ledger).toHaveLength(3);

    const fixed = `
      const a = await tools.pay({ amount: 10, to: 'a' });
      const b = await tools.balance({ account: 'main' });
      const c = await tools.pay({ to: 'b', amount: 20 });
      const d = await tools.pay({ to: 'c', amount: 5 });
      return [a.receipt, b, c.receipt, d.receipt];`;
    const created = await revise(first, { code: fixed });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      status: 'pending',
      code: fixed,
      language: 'javascript',
      tenant: 'tenant-a',
      deadline: null,
      revision: { revision_of: first, rerun_reads: false, offered: 0, carried: 0, not_repeated: [] },
    });
    const revised = created.body.task_id;
    const done = await settled(revised);
    expect(done.status, JSON.stringify(done.error)).toBe('succeeded');
    expect(done.result?.output).toEqual(['r1', 100, 'r3', 'r4']);
    // The ledger: the three calls ran once (by the first task), only the new payment ran now.
    expect(ledger.map((l) => l.tool)).toEqual(['pay', 'balance', 'pay', 'pay']);
    expect(ran('pay')).toEqual([
      { to: 'a', amount: 10 },
      { to: 'b', amount: 20 },
      { to: 'c', amount: 5 },
    ]);
    expect(done.progress).toMatchObject({ tool_calls_completed: 4, tool_calls_carried: 3 });
    expect(done.revision).toEqual({
      revision_of: first,
      rerun_reads: false,
      offered: 3,
      carried: 3,
      not_repeated: [],
    });
    // The events page shows where each taken-over call's outcome came from.
    const intents = (await events(revised)).filter((e) => e.type === 'tool_intent');
    expect(intents.map((e) => e.data.carried_from ?? null)).toEqual([
      { task_id: first, call_id: 'call-1' },
      { task_id: first, call_id: 'call-2' },
      { task_id: first, call_id: 'call-3' },
      null,
    ]);

    // Another revision of the same task that leaves the second payment out: it is reported, not repeated.
    const dropped = await revise(first, {
      code: `await tools.pay({ to: 'a', amount: 10 }); return await tools.balance({ account: 'main' });`,
    });
    expect(dropped.status).toBe(201);
    const end = await settled(dropped.body.task_id);
    expect(end.status).toBe('succeeded');
    expect(ledger).toHaveLength(4);
    expect(end.revision).toEqual({
      revision_of: first,
      rerun_reads: false,
      offered: 3,
      carried: 2,
      not_repeated: [
        {
          origin: { task_id: first, call_id: 'call-3' },
          tool: 'tools.pay',
          arguments: { to: 'b', amount: 20 },
        },
      ],
    });
  });

  it('rerun_reads runs the reads again and still takes the payments over', async () => {
    ledger.length = 0;
    const first = await submit(FAILS_AFTER_THREE);
    expect((await settled(first)).status).toBe('failed');
    const created = await revise(first, {
      code: `await tools.pay({ to: 'a', amount: 10 }); return await tools.balance({ account: 'main' });`,
      rerun_reads: true,
    });
    expect(created.body.revision?.rerun_reads).toBe(true);
    const end = await settled(created.body.task_id);
    expect(end.status).toBe('succeeded');
    expect(ledger.map((l) => l.tool)).toEqual(['pay', 'balance', 'pay', 'balance']);
    expect(end.progress.tool_calls_carried).toBe(1);
  });

  it('a revision that changes a payment pauses with the earlier call beside it; retry runs it once', async () => {
    ledger.length = 0;
    const first = await submit(`await tools.pay({ to: 'a', amount: 10 }); throw new Error('typo');`);
    expect((await settled(first)).status).toBe('failed');
    const created = await revise(first, {
      code: `const r = await tools.pay({ to: 'a', amount: 12 }); return r.receipt;`,
    });
    const held = await settled(created.body.task_id);
    expect(held).toMatchObject({ status: 'paused', pause_reason: 'needs_attention' });
    expect(held.attention_calls).toEqual([
      {
        call_id: 'call-1',
        tool: 'tools.pay',
        arguments: { to: 'a', amount: 12 },
        earlier: {
          origin: { task_id: first, call_id: 'call-1' },
          tool: 'tools.pay',
          arguments: { to: 'a', amount: 10 },
        },
      },
    ]);
    expect(held.attention).toEqual(held.attention_calls[0]);
    expect(ledger).toHaveLength(1);

    const retry = await http('POST', `/api/v1/tasks/${created.body.task_id}/attention`, a, {
      action: 'retry',
    });
    expect(retry.status).toBe(200);
    const end = await settled(created.body.task_id);
    expect(end).toMatchObject({ status: 'succeeded', result: { output: 'r2' } });
    expect(ran('pay')).toEqual([
      { to: 'a', amount: 10 },
      { to: 'a', amount: 12 },
    ]);
    expect(end.revision?.not_repeated).toEqual([
      {
        origin: { task_id: first, call_id: 'call-1' },
        tool: 'tools.pay',
        arguments: { to: 'a', amount: 10 },
      },
    ]);
  });

  it('the task stream and the client show the revision', async () => {
    ledger.length = 0;
    const first = await submit(FAILS_AFTER_THREE);
    expect((await settled(first)).status).toBe('failed');
    const client = createClient({ url, key: a.key });
    const created = await client.revise(first, {
      code: `return (await tools.pay({ to: 'a', amount: 10 })).receipt;`,
    });
    expect(created.revision?.revision_of).toBe(first);
    const seen: StreamEvent[] = [];
    for await (const e of client.stream(created.task_id, { signal: AbortSignal.timeout(10_000) }))
      seen.push(e);
    const intents = seen
      .flatMap((e) => (e.type === 'journal' ? e.entries : []))
      .filter((e) => e.type === 'tool_intent');
    expect(intents.map((e) => e.data.carried_from)).toEqual([{ task_id: first, call_id: 'call-1' }]);
    const views = seen.flatMap((e) => (e.type === 'view' || e.type === 'status' ? [e.view] : []));
    expect(views.at(-1)?.status).toBe('succeeded');
    expect(ledger).toHaveLength(3);
  });

  it('Idempotency-Key: the same key and body give the first revision, another body is refused', async () => {
    const first = await submit(`throw new Error('x')`);
    await settled(first);
    const body = { code: 'return 1' };
    const headers = { 'idempotency-key': 'rev-1' };
    const one = await revise(first, body, a, headers);
    const two = await revise(first, body, a, headers);
    expect([one.status, two.status]).toEqual([201, 201]);
    expect(two.body.task_id).toBe(one.body.task_id);
    const other = await revise(first, { code: 'return 2' }, a, headers);
    expect(other.status).toBe(422);
    expect(other.body.error.code).toBe('IDEMPOTENCY_CONFLICT');
    // The same key for a submission is another request.
    const submitted = await http('POST', '/api/v1/tasks', a, body, headers);
    expect(submitted.status).toBe(422);
  });

  it('refuses what cannot be revised, each in the envelope with its code', async () => {
    const before = await countTasks(fx.store);
    const failed = await submit(`throw new Error('x')`);
    await settled(failed);
    const check = async (id: string, body: unknown, status: number, code: string, key: ApiKey = a) => {
      const res = await revise(id, body, key);
      expect(res.status, JSON.stringify(res.body)).toBe(status);
      expect(res.body.error.code).toBe(code);
      expect(typeof res.body.error.message).toBe('string');
      expect(res.body.error.details).toBeTypeOf('object');
      return res.body.error;
    };
    await check('task_nope', { code: 'return 1' }, 404, 'NOT_FOUND');
    // Another tenant's task does not exist for this key.
    await check(failed, { code: 'return 1' }, 404, 'NOT_FOUND', b);
    // The strict body.
    await check(failed, {}, 400, 'BAD_REQUEST');
    await check(failed, { code: '' }, 400, 'BAD_REQUEST');
    await check(failed, { code: 'return 1', rerun_reads: 'yes' }, 400, 'BAD_REQUEST');
    await check(failed, { code: 'return 1', language: 'python' }, 400, 'BAD_REQUEST');
    // An agent task: its agent revises its own steps.
    const res = await http('POST', '/api/v1/tasks', a, { instruction: 'do it' });
    const agent = ((await res.json()) as { task_id: string }).task_id;
    await settled(agent);
    await check(agent, { code: 'return 1' }, 400, 'INVALID_ARGUMENT');
    // A task that has not ended: cancel it first.
    const waiting = await submit(`return await input.wait('go');`);
    expect((await settled(waiting)).pause_reason).toBe('awaiting_input');
    const error = await check(waiting, { code: 'return 1' }, 409, 'ILLEGAL_TRANSITION');
    expect(error.message).toContain('cancel it first');
    expect(error.details).toMatchObject({ status: 'paused' });
    // Refused requests stored nothing (the three tasks above are the only new ones).
    expect(await countTasks(fx.store)).toBe(before + 3);
  });

  it('the view of a revised task names its revisions, newest last; none when never revised; never another tenant', async () => {
    const first = await submit(`throw new Error('x')`);
    await settled(first);
    // Never revised: the view has no revised_by (absent, not empty).
    expect(await view(first)).not.toHaveProperty('revised_by');
    const r1 = (await revise(first, { code: 'return 1' })).body.task_id;
    expect((await settled(r1)).status).toBe('succeeded');
    const r2 = (await revise(first, { code: 'return 2' })).body.task_id;
    // A revision of the revision is r1's, not first's.
    const deeper = (await revise(r1, { code: 'return 3' })).body.task_id;
    await settled(r2);
    await settled(deeper);
    expect((await view(first)).revised_by).toEqual({ task_ids: [r1, r2], total: 2 });
    expect((await view(r1)).revised_by).toEqual({ task_ids: [deeper], total: 1 });
    expect(await view(r2)).not.toHaveProperty('revised_by');
    expect(await view(deeper)).not.toHaveProperty('revised_by');
    // The client and the task stream give the same view.
    const client = createClient({ url, key: a.key });
    expect((await client.get(first)).revised_by).toEqual({ task_ids: [r1, r2], total: 2 });
    const streamed: StreamEvent[] = [];
    for await (const e of client.stream(first, { signal: AbortSignal.timeout(10_000) })) streamed.push(e);
    const firstView = streamed.find((e) => e.type === 'view');
    expect(firstView?.type === 'view' ? firstView.view.revised_by : null).toEqual({
      task_ids: [r1, r2],
      total: 2,
    });
    // Lists read no more than each task's row: no revised_by there (GET the task).
    const listed = (await (await http('GET', '/api/v1/tasks?limit=1000', a)).json()) as {
      tasks: Record<string, unknown>[];
    };
    const item = listed.tasks.find((t) => t.task_id === first);
    expect(item).toBeDefined();
    expect(item).not.toHaveProperty('revised_by');
    // Another tenant sees neither the task nor its revisions.
    const other = await http('GET', `/api/v1/tasks/${first}`, b);
    expect(other.status).toBe(404);
    const otherBody = (await other.json()) as ErrorBody;
    expect(otherBody.error.code).toBe('NOT_FOUND');
    expect(JSON.stringify(otherBody)).not.toContain(r1);
    const ownB = await submit(`throw new Error('b')`, b);
    await settled(ownB, b);
    expect(await view(ownB, b)).not.toHaveProperty('revised_by');
  });

  it('is audited and journaled as the key that asked', async () => {
    const first = await submit(`throw new Error('x')`);
    await settled(first);
    const created = await revise(first, { code: 'return 1' });
    const audit = (await events(created.body.task_id)).filter((e) => e.source === 'audit');
    expect(audit[0]).toMatchObject({ type: 'created', data: { tenant: 'tenant-a', actor: `key:${a.id}` } });
  });
});
