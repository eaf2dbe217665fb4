import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSse } from '../../src/client/sse-reader.ts';
import { buildServer } from '../../src/http/index.ts';
import { payTool, useApiFixture } from './api-fixture.ts';
import type { ApiKey } from './api-fixture.ts';

// GET /api/v1/task-events over a real socket: status changes of every task of the caller's tenant, live, and none of
// another tenant's; changes written by another process (straight to the store) come by the server's change feed.

interface TaskEvent {
  task_id: string;
  status: string;
  tenant: string;
  pause_reason: string | null;
  pending_approvals: { id: string }[];
}

describe('GET /api/v1/task-events', () => {
  const fx = useApiFixture('http-tenant-events', {
    tools: [payTool()],
  });
  let base = '';
  let a: ApiKey;
  let b: ApiKey;
  beforeAll(async () => {
    base = await fx.app.listen({ port: 0, host: '127.0.0.1' });
    a = await fx.key('tenant-a');
    b = await fx.key('tenant-b');
  });
  const controllers: AbortController[] = [];
  afterAll(() => controllers.forEach((c) => c.abort()));

  /** Opens the stream and collects its `task` events until aborted; resolves once `ready` came. */
  async function listen(key: ApiKey): Promise<{ events: TaskEvent[] }> {
    const abort = new AbortController();
    controllers.push(abort);
    const res = await fetch(`${base}/api/v1/task-events`, { headers: key.headers, signal: abort.signal });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const out = { events: [] as TaskEvent[] };
    const messages = readSse(res.body!, { signal: abort.signal });
    const first = await messages.next();
    expect(first.value).toMatchObject({ event: 'ready' });
    void (async () => {
      for await (const m of messages)
        if (m.event === 'task') out.events.push(JSON.parse(m.data) as TaskEvent);
    })().catch(() => undefined);
    return out;
  }
  async function until(ok: () => boolean, what: string): Promise<void> {
    for (let i = 0; i < 1000; i++) {
      if (ok()) return;
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error(`timed out waiting for ${what}`);
  }
  const submit = async (key: ApiKey, code: string): Promise<string> => {
    const res = await fetch(`${base}/api/v1/tasks`, {
      method: 'POST',
      headers: { ...key.headers, 'content-type': 'application/json' },
      body: JSON.stringify({ code }),
    });
    expect(res.status).toBe(201);
    return ((await res.json()) as { task_id: string }).task_id;
  };

  it("sends each status change of the tenant's tasks with the view, and nothing of another tenant", async () => {
    const seenA = await listen(a);
    const seenB = await listen(b);
    const id = await submit(a, 'return await tools.pay({ amount: 500 });');
    const other = await submit(b, 'return 2;');
    await until(() => seenA.events.some((e) => e.task_id === id && e.status === 'paused'), 'paused');
    const paused = seenA.events.find((e) => e.task_id === id && e.status === 'paused');
    expect(paused).toMatchObject({ tenant: 'tenant-a', pause_reason: 'approval_required' });
    expect(paused?.pending_approvals).toHaveLength(1);
    await fx.runtime.decide(id, [
      { approvalId: paused?.pending_approvals[0]?.id ?? '', decision: 'approve' },
    ]);
    await until(() => seenA.events.some((e) => e.task_id === id && e.status === 'succeeded'), 'succeeded');
    const statuses = seenA.events.filter((e) => e.task_id === id).map((e) => e.status);
    expect(statuses[0]).toBe('pending');
    expect(statuses).toEqual(expect.arrayContaining(['running', 'paused', 'succeeded']));
    // No change is told twice.
    expect(statuses.every((s, i) => i === 0 || s !== statuses[i - 1])).toBe(true);
    await until(() => seenB.events.some((e) => e.task_id === other && e.status === 'succeeded'), 'b done');
    expect(seenA.events.some((e) => e.task_id === other)).toBe(false);
    expect(seenB.events.some((e) => e.task_id === id)).toBe(false);
  });

  it('notices a change made by another process within a few seconds', async () => {
    const id = await submit(a, 'return await tools.pay({ amount: 800 });');
    for (let i = 0; i < 500 && (await fx.runtime.get(id))?.status !== 'paused'; i++) {
      await new Promise((r) => setTimeout(r, 10));
    }
    const seen = await listen(a);
    // Another process's cancel: straight into the store, so this runtime emits no event for it.
    const task = await fx.store.getTask(id);
    await fx.store.updateTask(id, { status: 'cancelled' }, { expectedVersion: task?.version ?? 0 });
    await until(() => seen.events.some((e) => e.task_id === id && e.status === 'cancelled'), 'cancelled');
  });

  it('ends every open stream when the server closes', async () => {
    const app = buildServer({ runtime: fx.runtime, store: fx.store });
    const url = await app.listen({ port: 0, host: '127.0.0.1' });
    const res = await fetch(`${url}/api/v1/task-events`);
    const messages = readSse(res.body!);
    expect((await messages.next()).value).toMatchObject({
      event: 'ready',
      data: '{"tenant":null,"resumed":false}',
    });
    const ended = (async () => {
      for await (const _ of messages) {
        // status changes of other tests' tasks may come; the loop ends when the server ends the stream
      }
      return true;
    })();
    await app.close();
    expect(await ended).toBe(true);
  });
});
