import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/durable/index.ts';
import { buildServer } from '../../src/http/index.ts';
import { defineTool, ToolRegistry } from '../../src/index.ts';
import { useDurableFixture } from '../durable/fixture.ts';
import type { Runtime } from '../../src/api/index.ts';

// The task event stream over a real socket on loopback: Server-Sent Events from the first view to the end.

describe('GET /api/v1/tasks/{id}/stream', () => {
  const fx = useDurableFixture('http-stream');
  // A database of its own for the test of another runtime: the started runtime above would claim its task first.
  const apart = useDurableFixture('http-stream-apart');
  let runtime: Runtime;
  let app: ReturnType<typeof buildServer>;
  let base = '';
  let release: () => void = () => undefined;
  /** Calls of the gate so far: a test opens the gate its task waits at, not an earlier one. */
  let gated = 0;

  beforeAll(async () => {
    const tools = new ToolRegistry([
      defineTool({
        name: 'gate',
        description: 'waits for the test',
        effect: 'read',
        execute: () =>
          new Promise((resolve) => {
            release = () => resolve('open');
            gated += 1;
          }),
      }),
    ]);
    // Started by the test once its stream is open, so no event of the task comes before it subscribed.
    runtime = createRuntime({ store: fx.store, drivers: [fx.driver], tools, pollMs: 20 });
    app = buildServer({ runtime, store: fx.store });
    base = await app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await app.close();
    await runtime.close();
  });

  it('streams the view, journal entries, logs and status changes, and ends after the task ends', async () => {
    const created = await fetch(`${base}/api/v1/tasks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        code: "console.log('before'); const g = await tools.gate({}); console.log(g); return g;",
      }),
    });
    const { task_id } = (await created.json()) as { task_id: string };
    const res = await fetch(`${base}/api/v1/tasks/${task_id}/stream`);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    runtime.start();
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    const events: { event: string; data: unknown }[] = [];
    const read = async (): Promise<void> => {
      for (;;) {
        const chunk = (await reader.read()) as { done: boolean; value?: Uint8Array };
        const { done, value } = chunk;
        if (done) return;
        text += decoder.decode(value, { stream: true });
        let cut: number;
        while ((cut = text.indexOf('\n\n')) >= 0) {
          const block = text.slice(0, cut);
          text = text.slice(cut + 2);
          const event = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (event && data) events.push({ event, data: JSON.parse(data) as unknown });
          if (events.some((e) => e.event === 'journal')) release();
        }
      }
    };
    await read(); // returns when the server ends the stream
    const names = events.map((e) => e.event);
    expect(names[0]).toBe('view');
    expect(names).toContain('journal');
    expect(
      events.filter((e) => e.event === 'log').map((e) => (e.data as { message: string }).message),
    ).toContain('open');
    const last = events.at(-1);
    expect(last?.event).toBe('status');
    expect(last?.data).toMatchObject({ task_id, status: 'succeeded', result: { output: 'open' } });
    const intents = events
      .filter((e) => e.event === 'journal')
      .flatMap((e) => e.data as { type: string; data: { tool?: string } }[])
      .filter((x) => x.type === 'tool_intent');
    expect(intents.map((x) => x.data.tool)).toEqual(['tools.gate']);
  });

  /** Reads a stream to its end (or until `stop`), returning its event names and data. */
  async function drain(res: Response): Promise<{ event: string; data: Record<string, unknown> }[]> {
    const text = await res.text();
    return text
      .split('\n\n')
      .map((block) => ({ event: /^event: (.*)$/m.exec(block)?.[1], data: /^data: (.*)$/m.exec(block)?.[1] }))
      .filter((e): e is { event: string; data: string } => e.event !== undefined && e.data !== undefined)
      .map((e) => ({ event: e.event, data: JSON.parse(e.data) as Record<string, unknown> }));
  }

  it('follows a task another runtime runs to its end (by re-reading its view)', async () => {
    // This server's runtime runs nothing; another one on the same database does, and sends it no events.
    const steering = createRuntime({ store: apart.store, drivers: [], tools: new ToolRegistry([]) });
    const server = buildServer({ runtime: steering, store: apart.store });
    const base = await server.listen({ port: 0, host: '127.0.0.1' });
    const created = await fetch(`${base}/api/v1/tasks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ code: 'return 6 * 7' }),
    });
    const { task_id } = (await created.json()) as { task_id: string };
    const res = await fetch(`${base}/api/v1/tasks/${task_id}/stream`);
    const other = createRuntime({ store: apart.store, drivers: [apart.driver], tools: new ToolRegistry([]) });
    try {
      await other.run(task_id);
      const events = await drain(res);
      expect(events[0]?.event).toBe('view');
      expect(events.at(-1)).toMatchObject({
        event: 'status',
        data: { status: 'succeeded', result: { output: 42 } },
      });
    } finally {
      await other.close();
      await server.close();
      await steering.close();
    }
  });

  it('starts with what a running task printed before the stream opened, each line once', async () => {
    const created = await fetch(`${base}/api/v1/tasks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        code: "console.log('one'); console.log('two'); const g = await tools.gate({}); console.log('three'); return g;",
      }),
    });
    const gatedBefore = gated;
    const { task_id } = (await created.json()) as { task_id: string };
    for (let i = 0; i < 200 && runtime.liveLogs(task_id).length < 2; i++) {
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(runtime.liveLogs(task_id).map((l) => l.message)).toEqual(['one', 'two']);
    const res = await fetch(`${base}/api/v1/tasks/${task_id}/stream`);
    // Subscribed before its headers were sent: the gate may open now.
    const events = drain(res);
    // The program printed its lines before it calls the gate: wait until it waits there.
    for (let i = 0; i < 500 && gated === gatedBefore; i++) await new Promise((r) => setTimeout(r, 10));
    release();
    const got = await events;
    expect(got[0]?.event).toBe('view');
    expect(got.filter((e) => e.event === 'log').map((e) => e.data.message)).toEqual(['one', 'two', 'three']);
    expect(got.at(-1)).toMatchObject({ event: 'status', data: { status: 'succeeded' } });
    // The run is over: its lines are in the task's record, not kept here.
    expect(runtime.liveLogs(task_id)).toEqual([]);
  });

  it('ends open streams when the server closes', async () => {
    const second = buildServer({ runtime, store: fx.store });
    const at = await second.listen({ port: 0, host: '127.0.0.1' });
    const created = await fetch(`${at}/api/v1/tasks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ code: "return await input.wait('never')" }),
    });
    const { task_id } = (await created.json()) as { task_id: string };
    expect(await runtime.wait(task_id)).toMatchObject({ status: 'paused', pause_reason: 'awaiting_input' });
    const res = await fetch(`${at}/api/v1/tasks/${task_id}/stream`);
    const events = drain(res);
    await second.close();
    expect((await events).map((e) => e.event)).toEqual(['view']);
  });

  it('is a coded 404 for an unknown task', async () => {
    const res = await fetch(`${base}/api/v1/tasks/task_nope/stream`);
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error: { code: 'NOT_FOUND' } });
  });
});

describe('GET /api/v1/tasks/{id}/stream (a runtime of its own)', () => {
  const ownFx = useDurableFixture('http-stream-decisions');
  const drain = async (res: Response): Promise<{ event: string; data: Record<string, unknown> }[]> =>
    (await res.text())
      .split('\n\n')
      .map((block) => ({ event: /^event: (.*)$/m.exec(block)?.[1], data: /^data: (.*)$/m.exec(block)?.[1] }))
      .filter((e): e is { event: string; data: string } => e.event !== undefined && e.data !== undefined)
      .map((e) => ({ event: e.event, data: JSON.parse(e.data) as Record<string, unknown> }));

  it('sends every journal entry once and in order, also those written with a decision', async () => {
    const tools = new ToolRegistry([
      defineTool({
        name: 'pay',
        description: 'needs approval',
        effect: 'unsafe',
        requiresApproval: true,
        execute: () => 'paid',
      }),
    ]);
    const own = createRuntime({ store: ownFx.store, drivers: [ownFx.driver], tools, pollMs: 20 });
    const server = buildServer({ runtime: own, store: ownFx.store });
    const at = await server.listen({ port: 0, host: '127.0.0.1' });
    try {
      const view = await own.submit({ code: 'return await tools.pay({})' });
      const res = await fetch(`${at}/api/v1/tasks/${view.task_id}/stream`);
      const events = drain(res);
      own.start();
      const paused = await own.wait(view.task_id);
      const approval = paused.pending_approvals[0]?.id ?? '';
      await own.decide(view.task_id, [{ approvalId: approval, decision: 'approve' }]);
      const seqs = (await events)
        .filter((e) => e.event === 'journal')
        .flatMap((e) => (e.data as unknown as { seq: number; type: string }[]).map((x) => x));
      const journal = await ownFx.store.readJournal(view.task_id);
      expect(seqs.map((x) => x.seq)).toEqual(journal.slice(1).map((x) => x.seq));
      expect(seqs.map((x) => x.type)).toContain('approval_decision');
    } finally {
      await server.close();
      await own.close();
    }
  });
});
