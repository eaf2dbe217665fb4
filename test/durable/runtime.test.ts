import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime } from '../../src/durable/index.ts';
import { defineTool, ToolRegistry } from '../../src/internal.ts';
import type { QuickJsDriver, TaskStore } from '../../src/internal.ts';
import { journalAsDeadWorker, useDurableFixture } from './fixture.ts';
import type { Runtime, RuntimeEvent } from '../../src/api/index.ts';

// The library API over a real SQLite file and the real quickjs driver: submit, watch, steer.

describe('createRuntime', () => {
  const fx = useDurableFixture('runtime');
  let driver: QuickJsDriver;
  let store: TaskStore;
  let runtime: Runtime;
  const ran: string[] = [];
  let aborted = 0;
  let slowStarted = 0;

  beforeAll(() => {
    ({ driver, store } = fx);
    const tools = new ToolRegistry([
      defineTool({
        name: 'add',
        description: 'adds',
        effect: 'read',
        execute: (a) => {
          const { x, y } = a as { x: number; y: number };
          ran.push(`add ${x} ${y}`);
          return x + y;
        },
      }),
      defineTool({
        name: 'send',
        description: 'sends a message (not safe to repeat)',
        effect: 'unsafe',
        execute: (a) => {
          ran.push(`send ${(a as { to: string }).to}`);
          return { sent: true };
        },
      }),
      defineTool({
        name: 'slow',
        description: 'waits until aborted',
        effect: 'read',
        execute: (_a, ctx) =>
          new Promise((_resolve, reject) => {
            slowStarted++;
            ctx.signal.addEventListener('abort', () => {
              aborted++;
              reject(new Error('aborted'));
            });
          }),
      }),
    ]);
    runtime = createRuntime({ store, drivers: [driver], tools, pollMs: 50, leaseMs: 1_000 });
    runtime.start();
  });
  afterAll(async () => {
    await runtime.close();
  });

  it('runs a submitted task and shows it with the service field names', async () => {
    const events: RuntimeEvent[] = [];
    const offAll = runtime.subscribe('*', (e) => events.push(e));
    const submitted = await runtime.submit({
      code: 'console.log("adding"); return { sum: await tools.add({ x: 2, y: 3 }) };',
      metadata: { team: 'a' },
    });
    expect(submitted).toMatchObject({ status: 'pending', result: null, metadata: { team: 'a' } });
    const mine: RuntimeEvent[] = [];
    const off = runtime.subscribe(submitted.task_id, (e) => mine.push(e));
    const done = await runtime.wait(submitted.task_id, { until: 'terminal' });
    off();
    offAll();
    expect(mine.length).toBeGreaterThan(0);
    expect(mine.every((e) => e.taskId === submitted.task_id)).toBe(true);
    events.splice(0, events.length, ...events.filter((e) => e.taskId === submitted.task_id));
    expect(done).toMatchObject({
      task_id: submitted.task_id,
      status: 'succeeded',
      pause_reason: null,
      resumable: false,
      pending_approvals: [],
      current_step: 1,
      progress: { tool_calls_completed: 1 },
      error: null,
      result: { output: { sum: 5 }, execution_log: [{ level: 'log', message: 'adding' }] },
    });
    expect(done.checkpoint_id).toMatch(new RegExp(`^${submitted.task_id}:\\d+$`));
    expect(done.result?.resources_used.tool_calls).toBe(1);
    expect(done.result?.resources_used.memory_mb).toBeGreaterThan(0);
    expect(done.result?.resources_used.wall_time_s).toBeGreaterThan(0);
    const types = new Set(events.map((e) => e.type));
    expect(types).toEqual(new Set(['status', 'log', 'journal']));
    expect(events.filter((e) => e.type === 'status').map((e) => e.type === 'status' && e.status)).toEqual([
      'pending',
      'running',
      'succeeded',
    ]);
  });

  it('pauses on input.wait (awaiting_input) until the host supplies a JSON value', async () => {
    const t = await runtime.submit({
      code: `
        const before = await tools.add({ x: 1, y: 1 });
        const answer = await input.wait('approval_note', { timeoutSeconds: 600 });
        return { before, answer };`,
    });
    const paused = await runtime.wait(t.task_id);
    expect(paused).toMatchObject({ status: 'paused', pause_reason: 'awaiting_input', resumable: false });
    expect(paused.pending_inputs.map((p) => p.name)).toEqual(['approval_note']);
    expect(Date.parse(paused.pending_inputs[0]?.deadline ?? '')).toBeGreaterThan(Date.now());
    await expect(runtime.provideInput(t.task_id, 'other', 1)).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
    });
    await expect(runtime.resume(t.task_id)).rejects.toMatchObject({ code: 'ILLEGAL_TRANSITION' });
    const before = ran.length;
    await runtime.provideInput(t.task_id, 'approval_note', { text: 'ok', n: [1, 2] }, { actor: 'ops' });
    const done = await runtime.wait(t.task_id, { until: 'terminal' });
    expect(done).toMatchObject({
      status: 'succeeded',
      result: { output: { before: 2, answer: { text: 'ok', n: [1, 2] } } },
    });
    // The replay served the journaled add; nothing ran again.
    expect(ran.slice(before)).toEqual([]);
    const provided = (await store.readJournal(t.task_id)).find((e) => e.type === 'input_provided');
    expect(provided?.data).toMatchObject({ name: 'approval_note', actor: 'ops' });
  });

  it('fails a timed-out input wait in the guest with a catchable INPUT_TIMEOUT', async () => {
    const t = await runtime.submit({
      code: `
        try { await input.wait('never', { timeoutSeconds: 0.2 }); return 'got it'; }
        catch (e) { return e.code + ' ' + e.name; }`,
    });
    const paused = await runtime.wait(t.task_id);
    expect(paused.pause_reason).toBe('awaiting_input');
    const done = await runtime.wait(t.task_id, { until: 'terminal' });
    expect(done).toMatchObject({
      status: 'succeeded',
      result: { output: 'INPUT_TIMEOUT InputTimeoutError' },
    });
  });

  it('refuses a malformed input.wait in the guest with TOOL_VALIDATION', async () => {
    const t = await runtime.submit({
      code: `try { await input.wait(42); } catch (e) { return e.code; }`,
    });
    const done = await runtime.wait(t.task_id, { until: 'terminal' });
    expect(done).toMatchObject({ status: 'succeeded', result: { output: 'TOOL_VALIDATION' } });
  });

  it('cancels a running task: its running tool call sees an aborted signal', async () => {
    const t = await runtime.submit({ code: 'await tools.slow({}); return 1;' });
    // A read's intent is journaled with its outcome (ADR 0047, amended 2026-12-07): wait for the tool itself.
    const startedBefore = slowStarted;
    await waitFor(() => Promise.resolve(slowStarted > startedBefore));
    const abortedBefore = aborted;
    const cancelled = await runtime.cancel(t.task_id, { actor: 'ops' });
    expect(cancelled).toMatchObject({ status: 'cancelled', error: { code: 'CANCELLED' } });
    expect(aborted).toBe(abortedBefore + 1);
    await expect(runtime.cancel(t.task_id)).rejects.toMatchObject({ code: 'ILLEGAL_TRANSITION' });
    await expect(runtime.resume(t.task_id)).rejects.toMatchObject({ code: 'ILLEGAL_TRANSITION' });
  });

  it('pauses a CPU-bound task promptly and resumes it', async () => {
    const t = await runtime.submit({
      code: `const a = await tools.add({ x: 5, y: 5 }); let n = 0;
             while (performance.now() < 1e12 && n < 3e6) n++; return a + n;`,
      limits: { timeoutMs: 60_000 },
    });
    await waitFor(async () => (await store.readJournal(t.task_id)).some((e) => e.type === 'tool_outcome'));
    const started = performance.now();
    const paused = await runtime.pause(t.task_id, { actor: 'ops' });
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(paused).toMatchObject({ status: 'paused', pause_reason: 'user_request', resumable: true });
    await runtime.resume(t.task_id, { actor: 'ops' });
    const done = await runtime.wait(t.task_id, { until: 'terminal' });
    expect(done).toMatchObject({ status: 'succeeded', result: { output: 10 + 3e6 } });
    // The loop ran in two runs (the replay computes again); both count as CPU time.
    expect(done.result?.resources_used.cpu_time_s).toBeGreaterThan(0.005);
  });

  it('pauses and cancels a queued task without running it', async () => {
    const slow = createRuntime({ store, drivers: [driver], tools: new ToolRegistry([]) }); // never started
    const t = await slow.submit({ code: 'return 1' });
    await expect(slow.pause(t.task_id)).resolves.toMatchObject({
      status: 'paused',
      pause_reason: 'user_request',
    });
    await expect(slow.cancel(t.task_id)).resolves.toMatchObject({ status: 'cancelled' });
    await slow.close();
  });
});

describe('createRuntime: restarts', () => {
  const fx = useDurableFixture('restart');
  let driver: QuickJsDriver;
  let store: TaskStore;
  const ran: number[] = [];
  let release: () => void = () => undefined;

  beforeAll(() => {
    ({ driver, store } = fx);
  });

  const tools = new ToolRegistry([
    defineTool({
      name: 'step',
      description: 'records i; i = 2 waits for release (or an abort)',
      effect: 'idempotent',
      execute: (a, ctx) => {
        const { i } = a as { i: number };
        ran.push(i);
        if (i !== 2) return i;
        return new Promise((resolve, reject) => {
          release = () => resolve(i);
          ctx.signal.addEventListener('abort', () => reject(new Error('aborted')));
        });
      },
    }),
  ]);
  const program =
    'const out = []; for (let i = 0; i < 4; i++) out.push(await tools.step({ i })); return out;';

  it('pauses running tasks at a graceful shutdown; the next start resumes them by replay', async () => {
    const first = createRuntime({ store, drivers: [driver], tools, pollMs: 50 });
    first.start();
    const t = await first.submit({ code: program });
    await waitFor(() => Promise.resolve(ran.includes(2)));
    await first.close({ pauseRunning: true });
    expect(await store.getTask(t.task_id)).toMatchObject({ status: 'paused', pauseReason: 'shutdown' });

    ran.length = 0;
    const second = createRuntime({ store, drivers: [driver], tools, pollMs: 50 });
    second.start();
    await waitFor(() => Promise.resolve(ran.includes(2)));
    release();
    const done = await second.wait(t.task_id, { until: 'terminal' });
    await second.close();
    expect(done).toMatchObject({ status: 'succeeded', result: { output: [0, 1, 2, 3] } });
    // Steps 0 and 1 were journaled before the shutdown and are not run again; 2 was in flight and is.
    expect(ran).toEqual([2, 3]);
  });

  it('pauses what still runs when a close times out', async () => {
    ran.length = 0;
    const runtime = createRuntime({ store, drivers: [driver], tools, pollMs: 50 });
    runtime.start();
    const t = await runtime.submit({ code: program });
    await waitFor(() => Promise.resolve(ran.includes(2)));
    const started = performance.now();
    await runtime.close({ timeoutMs: 100 });
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(await store.getTask(t.task_id)).toMatchObject({ status: 'paused', pauseReason: 'shutdown' });
    await store.updateTask(
      t.task_id,
      { status: 'cancelled' },
      { expectedVersion: (await store.getTask(t.task_id))!.version },
    );
  });

  it('recovers a task whose worker died (lease expired) on start', async () => {
    ran.length = 0;
    const task = await store.createTask({ kind: 'code', code: program, language: 'javascript', seed: 3 });
    await journalAsDeadWorker(
      store,
      task.id,
      [
        { type: 'tool_intent', data: { call_id: 'call-1', tool: 'tools.step', args: '{"i":0}' } },
        { type: 'tool_outcome', data: { call_id: 'call-1', ok: true, payload: '0', clock: 0 } },
      ],
      { owner: 'dead', leaseMs: 100, keepLease: true },
    );
    const runtime = createRuntime({ store, drivers: [driver], tools, pollMs: 50 });
    runtime.start();
    await waitFor(() => Promise.resolve(ran.includes(2)));
    release();
    const done = await runtime.wait(task.id, { until: 'terminal' });
    await runtime.close();
    expect(done).toMatchObject({ status: 'succeeded', result: { output: [0, 1, 2, 3] }, attempts: 2 });
    expect(ran).toEqual([1, 2, 3]);
  });
});

describe('createRuntime: needs attention', () => {
  const fx = useDurableFixture('attention');
  let driver: QuickJsDriver;
  let store: TaskStore;
  let runtime: Runtime;
  const sent: string[] = [];

  beforeAll(() => {
    ({ driver, store } = fx);
    const tools = new ToolRegistry([
      defineTool({
        name: 'send',
        description: 'sends (unsafe)',
        effect: 'unsafe',
        execute: (a) => {
          sent.push((a as { to: string }).to);
          return { id: `msg-${sent.length}` };
        },
      }),
    ]);
    runtime = createRuntime({ store, drivers: [driver], tools, pollMs: 50 });
  });
  afterAll(async () => {
    await runtime.close();
  });

  /** A task whose worker "died" while `send` ran: the intent is journaled, the outcome is not. */
  async function lostUnsafeCall(to: string): Promise<string> {
    const task = await store.createTask({
      kind: 'code',
      code: `const r = await tools.send({ to: '${to}' }); return r;`,
      language: 'javascript',
      seed: 1,
    });
    await journalAsDeadWorker(
      store,
      task.id,
      [
        {
          type: 'tool_intent',
          data: { call_id: 'call-1', tool: 'tools.send', args: JSON.stringify({ to }) },
        },
      ],
      { owner: 'dead-worker', leaseMs: 60_000 },
    );
    const view = await runtime.run(task.id);
    expect(view).toMatchObject({
      status: 'paused',
      pause_reason: 'needs_attention',
      error: { code: 'NEEDS_ATTENTION' },
      attention: { call_id: 'call-1', tool: 'tools.send', arguments: { to } },
    });
    return task.id;
  }

  it('skip: the supplied result becomes the outcome; the tool never runs', async () => {
    const id = await lostUnsafeCall('skip@x');
    await expect(
      runtime.resolveAttention(id, { action: 'skip', result: { id: 'manual' } }),
    ).resolves.toMatchObject({
      status: 'pending',
    });
    const done = await runtime.run(id);
    expect(done).toMatchObject({ status: 'succeeded', result: { output: { id: 'manual' } } });
    expect(sent).not.toContain('skip@x');
  });

  it('retry: the call runs again, once', async () => {
    const id = await lostUnsafeCall('retry@x');
    await runtime.resolveAttention(id, { action: 'retry' }, { actor: 'ops', reason: 'checked: not sent' });
    const done = await runtime.run(id);
    expect(done).toMatchObject({ status: 'succeeded', result: { output: { id: 'msg-1' } } });
    expect(sent.filter((s) => s === 'retry@x')).toHaveLength(1);
    const decision = (await store.readJournal(id)).find((e) => e.type === 'attention_decision');
    expect(decision?.data).toMatchObject({ action: 'retry', actor: 'ops', reason: 'checked: not sent' });
  });

  it('retry: a crash while the retried call runs asks a human again', async () => {
    const id = await lostUnsafeCall('again@x');
    await runtime.resolveAttention(id, { action: 'retry' });
    // The retry started (journaled, as the runner does before calling the tool), then its worker died.
    await journalAsDeadWorker(
      store,
      id,
      [{ type: 'control', data: { action: 'retry_started', call_id: 'call-1' } }],
      { owner: 'dead-again', leaseMs: 60_000 },
    );
    const again = await runtime.run(id);
    expect(again).toMatchObject({ status: 'paused', pause_reason: 'needs_attention' });
    expect(sent).not.toContain('again@x');
  });

  it('fail: the task fails; a resume is refused before a decision', async () => {
    const id = await lostUnsafeCall('fail@x');
    await expect(runtime.resume(id)).rejects.toMatchObject({ code: 'ILLEGAL_TRANSITION' });
    const failed = await runtime.resolveAttention(id, { action: 'fail' }, { actor: 'ops' });
    expect(failed).toMatchObject({ status: 'failed', error: { code: 'NEEDS_ATTENTION' } });
    expect(sent).not.toContain('fail@x');
  });
});

async function waitFor(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 10));
  }
}
