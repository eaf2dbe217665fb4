import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineTool } from '../../src/index.ts';
import { readSse } from '../../src/client/sse-reader.ts';
import type { SseMessage } from '../../src/client/sse-reader.ts';
import { useApiFixture } from './api-fixture.ts';
import type { ApiKey, ErrorBody } from './api-fixture.ts';

// GET /api/v1/task-events resumes (ADR 0028): every event carries an id, the store's status change cursor; a
// client that reconnects with it gets exactly the status changes after it (each task once, at its latest), of
// the tasks it may see: nothing lost while it was away, nothing it had repeated. Over a real socket, with real
// changes from running tasks.

interface Told {
  readonly event: string;
  readonly id: number;
  readonly task_id?: string;
  readonly status?: string;
  readonly data: Record<string, unknown>;
}

describe('resumable task-events (Last-Event-ID)', () => {
  const gates: (() => void)[] = [];
  const fx = useApiFixture('http-task-events-resume', {
    tools: [
      defineTool({
        name: 'gate',
        description: 'waits for the test',
        effect: 'read',
        execute: () => new Promise((resolve) => gates.push(() => resolve('open'))),
      }),
    ],
  });
  let base = '';
  let a: ApiKey;
  let b: ApiKey;
  const aborts: AbortController[] = [];
  beforeAll(async () => {
    base = await fx.app.listen({ port: 0, host: '127.0.0.1' });
    a = await fx.key('t-resume-a');
    b = await fx.key('t-resume-b');
  });
  afterAll(() => {
    aborts.forEach((c) => c.abort());
    gates.splice(0).forEach((open) => open());
  });

  const submit = async (key: ApiKey, code: string): Promise<string> => {
    const res = await fetch(`${base}/api/v1/tasks`, {
      method: 'POST',
      headers: { ...key.headers, 'content-type': 'application/json' },
      body: JSON.stringify({ code }),
    });
    expect(res.status).toBe(201);
    return ((await res.json()) as { task_id: string }).task_id;
  };
  async function until(ok: () => boolean | Promise<boolean>, what: string): Promise<void> {
    for (let i = 0; i < 1000; i++) {
      if (await ok()) return;
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error(`timed out waiting for ${what}`);
  }
  const statusOf = async (id: string): Promise<string | undefined> => (await fx.store.getTask(id))?.status;

  /** Opens the stream and collects every event (with its id) until aborted. */
  async function listen(
    key: ApiKey,
    headers: Record<string, string> = {},
  ): Promise<{ told: Told[]; abort: AbortController }> {
    const abort = new AbortController();
    aborts.push(abort);
    const res = await fetch(`${base}/api/v1/task-events`, {
      headers: { ...key.headers, ...headers },
      signal: abort.signal,
    });
    expect(res.status).toBe(200);
    const told: Told[] = [];
    const push = (m: SseMessage): void => {
      const data = JSON.parse(m.data) as Record<string, unknown>;
      told.push({
        event: m.event,
        id: Number(m.id),
        data,
        ...(typeof data.task_id === 'string' ? { task_id: data.task_id } : {}),
        ...(typeof data.status === 'string' ? { status: data.status } : {}),
      });
    };
    void (async () => {
      for await (const m of readSse(res.body!, { signal: abort.signal })) push(m);
    })().catch(() => undefined);
    await until(() => told.length > 0, 'ready');
    expect(told[0]?.event).toBe('ready');
    return { told, abort };
  }

  it('a reconnect with Last-Event-ID gets exactly the changes after it: nothing lost, nothing repeated', async () => {
    const first = await listen(a);
    const ready = first.told[0];
    expect(ready?.data).toEqual({ tenant: 't-resume-a', resumed: false });
    expect(Number.isInteger(ready?.id)).toBe(true);
    const gatesBefore = gates.length;
    const t1 = await submit(a, 'await tools.gate({}); return 1;');
    await until(() => first.told.some((e) => e.task_id === t1 && e.status === 'running'), 't1 running');
    await until(() => gates.length > gatesBefore, 't1 at its gate');
    first.abort.abort();
    const lastId = first.told.at(-1)?.id ?? -1;

    // While away: t1 ends, t2 is made and ends, and another tenant's task comes and goes.
    gates.splice(0).forEach((open) => open());
    const t2 = await submit(a, 'return 2;');
    const other = await submit(b, 'return 3;');
    await until(
      async () =>
        (await statusOf(t1)) === 'succeeded' &&
        (await statusOf(t2)) === 'succeeded' &&
        (await statusOf(other)) === 'succeeded',
      'the tasks to end',
    );

    const second = await listen(a, { 'last-event-id': String(lastId) });
    expect(second.told[0]).toMatchObject({ event: 'ready', id: lastId, data: { resumed: true } });
    await until(() => second.told.filter((e) => e.event === 'task').length >= 2, 'the missed changes');
    // Then live: a task made now is told through to its end.
    const t3 = await submit(a, 'return 4;');
    await until(() => second.told.some((e) => e.task_id === t3 && e.status === 'succeeded'), 't3 succeeded');
    second.abort.abort();

    const missed = second.told.filter((e) => e.event === 'task' && e.task_id !== t3);
    // Each task once, at its latest: t1's end (not its running again), t2 at its end.
    // (t1's end and t2's may commit in either order.)
    expect(missed.map((e) => `${e.task_id}:${e.status}`).sort()).toEqual(
      [`${t1}:succeeded`, `${t2}:succeeded`].sort(),
    );
    // Ids grow strictly over both streams: nothing told twice.
    const ids = [...first.told, ...second.told.slice(1)].map((e) => e.id);
    expect(ids.every((id, i) => i === 0 || id > (ids[i - 1] ?? Infinity))).toBe(true);
    // Nothing of the other tenant.
    expect([...first.told, ...second.told].some((e) => e.task_id === other)).toBe(false);
    // The items are list items (a program over 4 KiB would be summarised) with the view's fields.
    expect(missed.find((e) => e.task_id === t1)?.data).toMatchObject({
      task_id: t1,
      tenant: 't-resume-a',
      code: expect.any(String) as unknown,
    });
  });

  it('`?after=` resumes like the header (for clients without EventSource)', async () => {
    const before = await listen(a);
    const at = before.told[0]?.id ?? -1;
    before.abort.abort();
    const id = await submit(a, 'return 5;');
    await until(async () => (await statusOf(id)) === 'succeeded', 'the task to end');
    const abort = new AbortController();
    aborts.push(abort);
    const res = await fetch(`${base}/api/v1/task-events?after=${at}`, {
      headers: a.headers,
      signal: abort.signal,
    });
    const told: SseMessage[] = [];
    void (async () => {
      for await (const m of readSse(res.body!, { signal: abort.signal })) told.push(m);
    })().catch(() => undefined);
    await until(() => told.some((m) => m.event === 'task' && m.data.includes('"succeeded"')), 'the end');
    abort.abort();
    expect(told[0]).toMatchObject({ event: 'ready', id: String(at) });
    const tasks = told
      .filter((m) => m.event === 'task')
      .map((m) => JSON.parse(m.data) as { task_id: string });
    expect(tasks.map((t) => t.task_id)).toEqual([id]);
  });

  it.each(['abc', '-1', '1.5', '12345678901234567890', ''])(
    'refuses the cursor %j with 400 before any SSE header',
    async (cursor) => {
      const url = `${base}/api/v1/task-events?after=${encodeURIComponent(cursor)}`;
      const res =
        cursor === ''
          ? await fetch(url, { headers: a.headers })
          : await fetch(`${base}/api/v1/task-events`, { headers: { ...a.headers, 'last-event-id': cursor } });
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toContain('application/json');
      const body = (await res.json()) as ErrorBody;
      expect(body.error.code).toBe('BAD_REQUEST');
    },
  );

  it('takes a cursor past the end as the end: what happens later is told', async () => {
    const now = await listen(a);
    const end = now.told[0]?.id ?? -1;
    now.abort.abort();
    const future = await listen(a, { 'last-event-id': String(end + 1_000_000) });
    expect(future.told[0]).toMatchObject({ event: 'ready', id: end, data: { resumed: true } });
    const id = await submit(a, 'return 6;');
    await until(() => future.told.some((e) => e.task_id === id && e.status === 'succeeded'), 'the new task');
    future.abort.abort();
    expect(future.told.slice(1).every((e) => e.id > end)).toBe(true);
  });
});
